package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"syscall"
)

// Reason words the error of an outbound call for a step's output and log:
// what went wrong in plain words, naming at most the host the workflow
// asked for. It never names the address a name resolved to, the resolver
// that answered or a local address, as the errors of the net package do
// ("lookup sap.example on 10.0.0.2:53: no such host", "dial tcp
// 10.1.2.3:443: connect: connection refused"): whoever writes a workflow
// would learn the deployment's network from them.
func Reason(err error) string {
	var (
		refused  *RefusedError
		tooLarge *TooLargeError
		dns      *net.DNSError
		hostname x509.HostnameError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		netErr   net.Error
		op       *net.OpError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &refused):
		return refused.Error()
	case errors.As(err, &tooLarge):
		return tooLarge.Error()
	case errors.As(err, &dns):
		switch {
		case dns.IsNotFound:
			return fmt.Sprintf("the name %s was not found in DNS", dns.Name)
		case dns.IsTimeout:
			return fmt.Sprintf("looking up the name %s in DNS timed out", dns.Name)
		}
		return fmt.Sprintf("the name %s could not be looked up in DNS", dns.Name)
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused: nothing listens there"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the host cannot be reached"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before an answer"
	case errors.As(err, &hostname):
		return fmt.Sprintf("its TLS certificate is not valid for %s", hostname.Host)
	case errors.As(err, &unknown):
		return "its TLS certificate is not signed by a known authority"
	case errors.As(err, &invalid):
		return "its TLS certificate is not valid: " + scrub(strings.TrimPrefix(invalid.Error(), "x509: "))
	case errors.As(err, &record):
		return "it did not answer in TLS"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "no answer in time"
	case errors.As(err, &op):
		return "the connection failed: " + scrub(op.Err.Error())
	}
	return scrub(err.Error())
}

// words splits an error's text into the runs that may be an address.
var words = regexp.MustCompile(`[\[\]0-9A-Za-z.:%]+`)

// scrub replaces the IP addresses in an error's text, with their ports,
// for the errors Reason does not know: a resolver's or a resolved address
// must not show.
func scrub(s string) string {
	return words.ReplaceAllStringFunc(s, func(w string) string {
		core := strings.TrimRight(w, ":.")
		if isAddress(core) {
			return "an address" + w[len(core):]
		}
		return w
	})
}

// isAddress reports whether s is an IP address, bracketed or not, with a
// port or not.
func isAddress(s string) bool {
	if _, err := netip.ParseAddrPort(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	return err == nil
}
