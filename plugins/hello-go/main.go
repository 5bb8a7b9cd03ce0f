// The Rust `hello` example's `greet`, in Go with Palisade's Go SDK (sdk-guest/go). Below this
// comment it is also what `palisade new --lang go` writes (host/src/authoring/new.rs).
package main

import palisade "github.com/palisade-mcp/palisade/sdk-guest/go"

type Greet struct {
	Name string `json:"name" description:"Who to greet."`
}

func init() {
	palisade.Tool("greet", "Say hello to someone", func(in Greet) (string, error) {
		return "Hello, " + in.Name + "!", nil
	}, palisade.ReadOnly())
}

// A plugin is a library: the host calls its tools, never main.
func main() {}
