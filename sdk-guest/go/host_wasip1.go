//go:build wasip1

package palisade

import (
	"encoding/json"
	"fmt"

	host "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_host"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	config "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_config_store"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

func hostLog(level LogLevel, message string) { host.Log(host.LogLevel(level), message) }

func hostProgress(progress, total float64, message string) {
	maybeTotal := witTypes.None[float64]()
	if total >= 0 {
		maybeTotal = witTypes.Some(total)
	}
	host.ReportProgress(progress, maybeTotal, optional(message))
}

func hostCancelled() bool { return host.IsCancelled() }

func hostRoots() []Root {
	roots := []Root{}
	for _, root := range host.ListRoots() {
		roots = append(roots, Root{URI: root.Uri, Name: root.Name.SomeOr(""), Path: root.GuestPath, Writable: root.Writable})
	}
	return roots
}

func hostEnv(name string) (string, bool) {
	value := host.GetEnv(name)
	return value.SomeOr(""), value.IsSome()
}

func hostElicit(message, schema string) (*Elicitation, error) {
	answer := host.Elicit(host.MakeElicitationRequestForm(host.FormElicitation{Message: message, RequestedSchema: schema}))
	if answer.IsErr() {
		return nil, fmt.Errorf("cannot ask the user: %s", answer.Err())
	}
	response := answer.Ok()
	out := &Elicitation{Action: [...]string{"accept", "decline", "cancel"}[response.Action%3]}
	if response.Content.IsSome() {
		if err := json.Unmarshal([]byte(response.Content.Some()), &out.Content); err != nil {
			return nil, fmt.Errorf("the user's answer is not a JSON object: %w", err)
		}
	}
	return out, nil
}

func hostSample(request SamplingRequest) (*SamplingResponse, error) {
	messages := make([]host.SamplingMessage, 0, len(request.Messages))
	for _, message := range request.Messages {
		messages = append(messages, host.SamplingMessage{
			Role:    toWitRole(message.Role),
			Content: []types.ContentBlock{toWitContent(message.Content)},
		})
	}
	temperature := witTypes.None[float64]()
	if request.Temperature != nil {
		temperature = witTypes.Some(*request.Temperature)
	}
	answer := host.Sample(host.SamplingRequest{
		Messages:         messages,
		SystemPrompt:     optional(request.SystemPrompt),
		MaxTokens:        request.MaxTokens,
		Temperature:      temperature,
		StopSequences:    nil,
		ModelPreferences: witTypes.None[string](),
		Extra:            witTypes.None[string](),
	})
	if answer.IsErr() {
		return nil, fmt.Errorf("the client's model did not answer: %s", answer.Err())
	}
	response := answer.Ok()
	text := ""
	for _, block := range response.Content {
		if block.Tag() == types.ContentBlock_Text {
			text += block.Text().Text
		}
	}
	role := RoleAssistant
	if response.Role == types.Role_User {
		role = RoleUser
	}
	return &SamplingResponse{Role: role, Text: text, Model: response.Model, StopReason: response.StopReason.SomeOr(""), Raw: response.Raw}, nil
}

func toWitRole(role Role) types.Role {
	if role == RoleAssistant {
		return types.Role_Assistant
	}
	return types.Role_User
}

func hostSecret(name string) (string, error) {
	answer := config.Get(name)
	if answer.IsErr() {
		why := answer.Err()
		text := ""
		if why.Tag() == config.Error_Upstream {
			text = why.Upstream()
		} else {
			text = why.Io()
		}
		return "", fmt.Errorf("the secret %s cannot be read: %s", name, text)
	}
	if answer.Ok().IsNone() {
		return "", missingSecret(name)
	}
	return answer.Ok().Some(), nil
}
