//go:build !wasip1

package httpclient

import "net/http"

// Outside WebAssembly (a plugin's own `go test`), requests go out directly, with the limits.
func newTransport(maxBody int64) http.RoundTripper {
	return capTransport{next: http.DefaultTransport, maxBody: maxBody}
}

type capTransport struct {
	next    http.RoundTripper
	maxBody int64
}

func (t capTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := t.next.RoundTrip(request)
	if err == nil {
		response.Body = &cappedBody{body: response.Body, left: t.maxBody, limit: t.maxBody, url: request.URL.String()}
	}
	return response, err
}
