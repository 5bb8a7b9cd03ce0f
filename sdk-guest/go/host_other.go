//go:build !wasip1

package palisade

import (
	"fmt"
	"os"
)

// Outside WebAssembly (a plugin's own `go test`) there is no host: logs go to stderr, and
// there is no progress, cancellation, root or granted variable.

func hostLog(level LogLevel, message string) { fmt.Fprintf(os.Stderr, "[%d] %s\n", level, message) }

func hostProgress(progress, total float64, message string) {}

func hostCancelled() bool { return false }

func hostRoots() []Root { return nil }

func hostEnv(name string) (string, bool) { return "", false }

func hostElicit(message, schema string) (*Elicitation, error) {
	return nil, fmt.Errorf("no client to ask outside the host")
}

func hostSample(request SamplingRequest) (*SamplingResponse, error) {
	return nil, fmt.Errorf("no client to ask outside the host")
}

func hostSecret(name string) (string, error) { return "", missingSecret(name) }
