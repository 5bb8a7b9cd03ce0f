// {{name}}: a Palisade plugin.
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
