module hello-go

go 1.27.1

