package palisade

import (
	"encoding/json"
	"fmt"
)

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

// Elicitation is the user's answer to Elicit.
type Elicitation struct {
	// Action is "accept", "decline" or "cancel".
	Action string
	// Content holds the submitted values when Action is "accept".
	Content map[string]any
}

// Elicit asks the user to fill in a form (MCP elicitation): `schema` is a flat JSON Schema
// object of primitive properties. An error when the client cannot ask.
func Elicit(message string, schema map[string]any) (*Elicitation, error) {
	text, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the form's schema is not JSON: %w", err)
	}
	return hostElicit(message, string(text))
}

// SamplingRequest asks the client's model for a completion (MCP sampling).
type SamplingRequest struct {
	Messages     []Message
	SystemPrompt string
	MaxTokens    uint32
	// Temperature, when not nil.
	Temperature *float64
}

// SamplingResponse is the model's answer.
type SamplingResponse struct {
	Role Role
	// Text joins the answer's text blocks.
	Text       string
	Model      string
	StopReason string
	// Raw is the whole result as the client sent it, JSON.
	Raw string
}

// Sample asks the client's language model; an error when the client cannot or the user
// refuses.
func Sample(request SamplingRequest) (*SamplingResponse, error) {
	if request.MaxTokens == 0 {
		request.MaxTokens = 1000
	}
	return hostSample(request)
}

// Secret is the secret (or configuration value) `name` the server's configuration gives this
// plugin ([plugins.NAME.secrets] or [plugins.NAME.config]); an error saying how to give it
// otherwise.
func Secret(name string) (string, error) { return hostSecret(name) }

// Config is the configuration value (or secret) `name`, if the server's configuration gives
// one: for settings with a default, such as an API's base URL.
func Config(name string) (string, bool) {
	value, err := hostSecret(name)
	return value, err == nil
}

func missingSecret(name string) error {
	return fmt.Errorf("the secret %s is not given to this plugin: add `%s = { env = \"HOST_VARIABLE\" }` "+
		"(or `{ file = \"PATH\" }`) under [plugins.PLUGIN.secrets] in the server's configuration", name, name)
}
