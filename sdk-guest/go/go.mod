module github.com/palisade-mcp/palisade/sdk-guest/go

go 1.27.1

require go.bytecodealliance.org/pkg v0.4.0
