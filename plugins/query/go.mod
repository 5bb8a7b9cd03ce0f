module query

go 1.27.1
