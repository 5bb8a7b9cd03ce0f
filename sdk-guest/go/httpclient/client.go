// Package httpclient makes HTTP requests from a Palisade plugin: through the host's
// wasi:http, to the hosts the plugin's `network` grant lists and nowhere else. New returns a
// standard *http.Client for that; importing the package also makes it http.DefaultClient's
// transport, so libraries that use net/http work unchanged:
//
//		resp, err := httpclient.New().Get("https://api.github.com/repos/o/r")
//
//	  - Redirects are followed (up to 5); every hop is a new request the host checks against
//	    the grant, and net/http drops Authorization and Cookie on a hop to another host.
//	  - One deadline covers the whole exchange, headers and body: 30 s by default.
//	  - A response body larger than 10 MiB is an error when read, never cut short silently.
//	  - Errors say what to do: a host without a grant names the `network` entry to add.
//
// It is a package of its own because net/http adds about 7 MB to a plugin: plugins that do
// not import it do not pay for it.
package httpclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The defaults of New.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxBody       = 10 << 20
	DefaultMaxRedirects  = 5
	maxRedirectsExceeded = "more than %d redirects (allow more with httpclient.MaxRedirects)"
)

// Option changes a client New makes.
type Option func(*httpSettings)

type httpSettings struct {
	timeout      time.Duration
	maxBody      int64
	maxRedirects int
}

// Timeout sets the deadline of a whole exchange.
func Timeout(timeout time.Duration) Option {
	return func(s *httpSettings) { s.timeout = timeout }
}

// MaxBody sets how many bytes of a response body may be read.
func MaxBody(bytes int64) Option { return func(s *httpSettings) { s.maxBody = bytes } }

// MaxRedirects sets how many redirects are followed; 0 returns the redirect itself.
func MaxRedirects(redirects int) Option {
	return func(s *httpSettings) { s.maxRedirects = redirects }
}

// New is an *http.Client whose requests go through the host, with these options.
func New(options ...Option) *http.Client {
	settings := httpSettings{timeout: DefaultTimeout, maxBody: DefaultMaxBody, maxRedirects: DefaultMaxRedirects}
	for _, option := range options {
		option(&settings)
	}
	return &http.Client{
		Transport: newTransport(settings.maxBody),
		Timeout:   settings.timeout,
		CheckRedirect: func(request *http.Request, via []*http.Request) error {
			if settings.maxRedirects == 0 {
				return http.ErrUseLastResponse
			}
			if len(via) > settings.maxRedirects {
				return fmt.Errorf(maxRedirectsExceeded, settings.maxRedirects)
			}
			dropCredentialsAcrossOrigins(request, via[0])
			return nil
		},
	}
}

// ErrorKind says what went wrong with a request, for programs.
type ErrorKind int

// The kinds, as the Rust SDK's http::ErrorKind has them.
const (
	InvalidRequest ErrorKind = iota
	NotGranted
	LocalAddress
	TimedOut
	TooLarge
	Transport
)

// Error is a failed request, with a message that says what to do about it; errors.As finds
// it inside net/http's *url.Error.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Timeout tells net/http (and callers) that the deadline passed.
func (e *Error) Timeout() bool { return e.Kind == TimedOut }

// grantFor is the `network` entry that grants a URL's host, as the host writes it.
func grantFor(scheme, host string) string {
	host = strings.ToLower(host)
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		name, port = host[:i], host[i+1:]
	}
	switch {
	case scheme == "https" && (port == "" || port == "443"):
		return name
	case scheme == "https":
		return name + ":" + port
	case port == "" || port == "80":
		return "http://" + name
	}
	return "http://" + name + ":" + port
}

// cappedBody fails a read past the body limit rather than cutting the body short.
type cappedBody struct {
	body  io.ReadCloser
	left  int64
	limit int64
	url   string
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more says whether the body really is longer than the limit.
		var probe [1]byte
		n, err := c.body.Read(probe[:])
		if n > 0 {
			return 0, &Error{Kind: TooLarge, Message: fmt.Sprintf("%s: the body is larger than %d bytes (allow more with httpclient.MaxBody)", c.url, c.limit)}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.body.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.body.Close() }

var errNoHost = errors.New("the URL has no host")

// dropCredentialsAcrossOrigins removes credentials from a redirect to another origin (scheme,
// host and port). net/http keeps them for the same host name on another port; the Rust SDK's
// client does not, and neither does this one.
func dropCredentialsAcrossOrigins(next, first *http.Request) {
	if next.URL == nil || first.URL == nil {
		return
	}
	if next.URL.Scheme == first.URL.Scheme && strings.EqualFold(next.URL.Host, first.URL.Host) {
		return
	}
	for _, name := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		next.Header.Del(name)
	}
}
