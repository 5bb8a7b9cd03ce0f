//go:build wasip1

package httpclient

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	clock "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_clocks_monotonic_clock"
	outgoing "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_http_outgoing_handler"
	wasihttp "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_http_types"
	poll "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_io_poll"
	streams "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/wasi_io_streams"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// What a request says it comes from unless it says otherwise.
const userAgent = "palisade-go-sdk/0.2.0"

// The largest piece written to a stream at once: wasi:http hosts accept 4096 bytes per
// blocking write.
const chunk = 4096

func init() {
	// Libraries that use http.DefaultClient or http.Get go through the host too.
	http.DefaultTransport = newTransport(DefaultMaxBody)
}

func newTransport(maxBody int64) http.RoundTripper { return &wasiTransport{maxBody: maxBody} }

type wasiTransport struct{ maxBody int64 }

// deadline is the monotonic instant (ns) a request must be over by: the request context's
// (http.Client's Timeout sets it), else DefaultTimeout from now.
func deadline(request *http.Request) uint64 {
	left := DefaultTimeout
	if at, ok := request.Context().Deadline(); ok {
		left = time.Until(at)
	}
	if left < time.Millisecond {
		left = time.Millisecond
	}
	return clock.Now() + uint64(left.Nanoseconds())
}

func (t *wasiTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	// net/http's *url.Error says the method and URL before these messages; a body read after
	// the response says them itself.
	what := request.Method + " " + request.URL.Redacted()
	invalid := func(format string, args ...any) error {
		return &Error{Kind: InvalidRequest, Message: fmt.Sprintf(format, args...)}
	}
	scheme := request.URL.Scheme
	if scheme != "http" && scheme != "https" {
		return nil, invalid("not an http:// or https:// URL")
	}
	authority := request.URL.Host
	if request.Host != "" {
		authority = request.Host
	}
	if authority == "" {
		return nil, invalid("%v", errNoHost)
	}
	if request.URL.User != nil {
		return nil, invalid("user names and passwords in URLs are not sent: use a header")
	}
	var body []byte
	if request.Body != nil {
		read, err := io.ReadAll(request.Body)
		request.Body.Close()
		if err != nil {
			return nil, invalid("reading the request body: %v", err)
		}
		body = read
	}
	var pairs []witTypes.Tuple2[string, []uint8]
	// Some APIs (GitHub's among them) refuse a request without a User-Agent.
	if request.Header.Get("user-agent") == "" {
		pairs = append(pairs, witTypes.Tuple2[string, []uint8]{F0: "user-agent", F1: []byte(userAgent)})
	}
	for name, values := range request.Header {
		for _, value := range values {
			pairs = append(pairs, witTypes.Tuple2[string, []uint8]{F0: strings.ToLower(name), F1: []byte(value)})
		}
	}
	// A known length rather than chunks: some APIs refuse chunked requests.
	if len(body) > 0 && request.Header.Get("content-length") == "" {
		pairs = append(pairs, witTypes.Tuple2[string, []uint8]{F0: "content-length", F1: []byte(strconv.Itoa(len(body)))})
	}
	fields := wasihttp.FieldsFromList(pairs)
	if fields.IsErr() {
		return nil, invalid("a header is not allowed")
	}
	out := wasihttp.MakeOutgoingRequest(fields.Ok())
	if out.SetMethod(method(request.Method)).IsErr() {
		return nil, invalid("%q is not a method", request.Method)
	}
	wasiScheme := wasihttp.MakeSchemeHttp()
	if scheme == "https" {
		wasiScheme = wasihttp.MakeSchemeHttps()
	}
	if out.SetScheme(witTypes.Some(wasiScheme)).IsErr() {
		return nil, invalid("the scheme is not allowed")
	}
	if out.SetAuthority(witTypes.Some(authority)).IsErr() {
		return nil, invalid("%q is not a valid host", authority)
	}
	if out.SetPathWithQuery(witTypes.Some(request.URL.RequestURI())).IsErr() {
		return nil, invalid("%q is not a valid path", request.URL.RequestURI())
	}

	// Every phase gets what is left of the one deadline; the body reads keep it too.
	until := deadline(request)
	options := wasihttp.MakeRequestOptions()
	left := witTypes.Some(until - min(clock.Now(), until-1))
	options.SetConnectTimeout(left)
	options.SetFirstByteTimeout(left)
	options.SetBetweenBytesTimeout(left)

	outBody := out.Body().Ok()
	future := outgoing.Handle(out, witTypes.Some(options))
	if future.IsErr() {
		outBody.Drop()
		return nil, failure(scheme, authority, future.Err())
	}
	if err := writeBody(outBody, body); err != nil {
		return nil, &Error{Kind: Transport, Message: "sending the body failed: " + err.Error()}
	}
	if finished := wasihttp.OutgoingBodyFinish(outBody, witTypes.None[*wasihttp.Fields]()); finished.IsErr() {
		return nil, failure(scheme, authority, finished.Err())
	}

	pending := future.Ok()
	defer pending.Drop()
	ready := pending.Subscribe()
	timer := clock.SubscribeInstant(until)
	poll.Poll([]*poll.Pollable{ready, timer})
	timer.Drop()
	ready.Drop()
	got := pending.Get()
	if got.IsNone() {
		return nil, timedOut("")
	}
	if got.Some().IsErr() {
		return nil, &Error{Kind: Transport, Message: "the response was already taken"}
	}
	answer := got.Some().Ok()
	if answer.IsErr() {
		return nil, failure(scheme, authority, answer.Err())
	}
	incoming := answer.Ok()
	header := http.Header{}
	headers := incoming.Headers()
	for _, entry := range headers.Entries() {
		header.Add(entry.F0, string(entry.F1))
	}
	headers.Drop()
	consumed := incoming.Consume()
	if consumed.IsErr() {
		incoming.Drop()
		return nil, &Error{Kind: Transport, Message: "the response body was already taken"}
	}
	incomingBody := consumed.Ok()
	stream := incomingBody.Stream().Ok()
	status := int(incoming.Status())
	reader := &bodyReader{what: what, stream: stream, body: incomingBody, response: incoming, until: until}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          &cappedBody{body: reader, left: t.maxBody, limit: t.maxBody, url: what},
		ContentLength: contentLength(header),
		Request:       request,
	}, nil
}

func contentLength(header http.Header) int64 {
	if n, err := strconv.ParseInt(header.Get("content-length"), 10, 64); err == nil {
		return n
	}
	return -1
}

func method(name string) wasihttp.Method {
	switch strings.ToUpper(name) {
	case "GET", "":
		return wasihttp.MakeMethodGet()
	case "HEAD":
		return wasihttp.MakeMethodHead()
	case "POST":
		return wasihttp.MakeMethodPost()
	case "PUT":
		return wasihttp.MakeMethodPut()
	case "DELETE":
		return wasihttp.MakeMethodDelete()
	case "OPTIONS":
		return wasihttp.MakeMethodOptions()
	case "PATCH":
		return wasihttp.MakeMethodPatch()
	}
	return wasihttp.MakeMethodOther(name)
}

func writeBody(body *wasihttp.OutgoingBody, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	stream := body.Write().Ok()
	defer stream.Drop()
	for len(data) > 0 {
		piece := data[:min(chunk, len(data))]
		if written := stream.BlockingWriteAndFlush(piece); written.IsErr() {
			return streamError(written.Err())
		}
		data = data[len(piece):]
	}
	return nil
}

func streamError(e streams.StreamError) error {
	if e.Tag() == streams.StreamError_Closed {
		return fmt.Errorf("the connection closed")
	}
	return fmt.Errorf("%s", e.LastOperationFailed().ToDebugString())
}

// timedOut says the deadline passed; `what` names the request when no *url.Error will.
func timedOut(what string) error {
	message := "no complete answer before the deadline (allow longer with httpclient.Timeout)"
	if what != "" {
		message = what + ": " + message
	}
	return &Error{Kind: TimedOut, Message: message}
}

// failure is a wasi:http error code in words, naming the grant to add when the host refused.
func failure(scheme, authority string, code wasihttp.ErrorCode) error {
	kind, why := Transport, ""
	switch code.Tag() {
	case wasihttp.ErrorCode_HttpRequestDenied:
		kind = NotGranted
		why = fmt.Sprintf("host not granted: add `network = [\"%s\"]` to the plugin's section of the server's configuration", grantFor(scheme, authority))
	case wasihttp.ErrorCode_DestinationIpProhibited:
		kind = LocalAddress
		why = authority + " resolves to a loopback or private address, which a name's grant does not cover: grant the address itself"
	case wasihttp.ErrorCode_ConnectionTimeout, wasihttp.ErrorCode_ConnectionReadTimeout,
		wasihttp.ErrorCode_ConnectionWriteTimeout, wasihttp.ErrorCode_HttpResponseTimeout:
		return timedOut("")
	case wasihttp.ErrorCode_DnsError:
		why = "cannot resolve the host's name (" + code.DnsError().Rcode.SomeOr("no answer") + ")"
	case wasihttp.ErrorCode_ConnectionRefused:
		why = "connection refused"
	case wasihttp.ErrorCode_HttpRequestUriInvalid:
		kind, why = InvalidRequest, "invalid URL"
	case wasihttp.ErrorCode_TlsCertificateError:
		why = "the server's certificate is not trusted"
	default:
		why = fmt.Sprintf("the request failed (wasi:http error %d)", code.Tag())
	}
	return &Error{Kind: kind, Message: why}
}

// bodyReader reads a response body from its wasi stream, within the request's deadline.
type bodyReader struct {
	what     string
	stream   *streams.InputStream
	body     *wasihttp.IncomingBody
	response *wasihttp.IncomingResponse
	until    uint64
	pending  bytes.Buffer
	done     bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	for r.pending.Len() == 0 {
		if r.done {
			return 0, io.EOF
		}
		got := r.stream.Read(uint64(chunk * 16))
		if got.IsErr() {
			if got.Err().Tag() == streams.StreamError_Closed {
				r.done = true
				continue
			}
			return 0, &Error{Kind: Transport, Message: r.what + ": reading the body failed: " + streamError(got.Err()).Error()}
		}
		if len(got.Ok()) > 0 {
			r.pending.Write(got.Ok())
			break
		}
		if clock.Now() >= r.until {
			return 0, timedOut(r.what)
		}
		ready := r.stream.Subscribe()
		timer := clock.SubscribeInstant(r.until)
		poll.Poll([]*poll.Pollable{ready, timer})
		timer.Drop()
		ready.Drop()
	}
	return r.pending.Read(p)
}

// Close drops the stream, then its body, then its response, as the component model requires
// of child resources.
func (r *bodyReader) Close() error {
	if r.stream != nil {
		r.stream.Drop()
		r.body.Drop()
		r.response.Drop()
		r.stream = nil
	}
	return nil
}
