module {{name}}

go 1.27.1

require (
	github.com/palisade-mcp/palisade/sdk-guest/go v0.0.0
	go.bytecodealliance.org/pkg v0.4.0 // indirect
)

// From your Palisade checkout until the Go SDK is published.
replace github.com/palisade-mcp/palisade/sdk-guest/go => {{sdk}}/sdk-guest/go

// The Go bindings' runtime, from the crate that ships its source (the checkout's plugins
// build fetches it); with a Go module proxy, delete this line and run `go mod tidy`.
replace go.bytecodealliance.org/pkg v0.4.0 => {{sdk}}/target/go-deps/wit-bindgen-go-0.63.0/src/pkg
