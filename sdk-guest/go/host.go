package palisade

import "fmt"

// LogLevel is an MCP log level, lowest first.
type LogLevel uint8

// The levels, as MCP names them.
const (
	LogDebug LogLevel = iota
	LogInfo
	LogNotice
	LogWarning
	LogError
	LogCritical
	LogAlert
	LogEmergency
)

// Root is a directory of the client's that this plugin may use for the current call.
type Root struct {
	// URI is the root's URI as the client gave it (file:///...).
	URI string
	// Name is the client's name for it, if any.
	Name string
	// Path is where the plugin sees it: open files under it with the os package.
	Path string
	// Writable says whether the plugin may write there.
	Writable bool
}

// Logf writes a log message: to the server's log, tagged with the plugin's name, and to the
// client when it asked for this level.
func Logf(level LogLevel, format string, args ...any) { hostLog(level, fmt.Sprintf(format, args...)) }

// Progress reports progress on the current call; total < 0 when unknown.
func Progress(progress, total float64, message string) { hostProgress(progress, total, message) }

// Cancelled is true once the client cancelled the current call: stop soon.
func Cancelled() bool { return hostCancelled() }

// Roots lists the client's roots this plugin may use for the current call.
func Roots() []Root { return hostRoots() }

// Env is the server's environment variable `name` when this plugin may read it (granted in
// its configuration, or allowed by the user when asked); ok is false otherwise.
func Env(name string) (value string, ok bool) { return hostEnv(name) }
