// Package outbound builds the HTTP client of http and erp steps: calls to
// loopback, link-local, private and cloud metadata addresses are refused
// after DNS resolution (so a name that resolves, or later rebinds, to such an
// address does not get through), on every redirect too, unless the
// deployment allow-lists them; calls have timeouts, bounded response bodies,
// and idempotent calls are retried with backoff.
package outbound

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// AllowEnv names the environment variable with the deployment's allow list.
const AllowEnv = "CARDFLOW_OUTBOUND_ALLOW"

// blockedRange is an address range outbound calls may not reach, and why.
type blockedRange struct {
	prefix netip.Prefix
	why    string
}

// blocked lists the ranges refused unless allow-listed. Metadata endpoints
// (169.254.169.254, fd00:ec2::254, 100.100.100.200) fall inside the
// link-local, ULA and CGNAT ranges; they are listed first so the refusal
// names them.
var blocked = func() []blockedRange {
	var out []blockedRange
	for _, r := range [][2]string{
		{"169.254.169.254/32", "a cloud metadata address"},
		{"169.254.170.2/32", "a cloud metadata address"},
		{"fd00:ec2::254/128", "a cloud metadata address"},
		{"100.100.100.200/32", "a cloud metadata address"},
		{"0.0.0.0/8", "an unspecified address"},
		{"::/128", "an unspecified address"},
		{"127.0.0.0/8", "a loopback address"},
		{"::1/128", "a loopback address"},
		// IPv4-compatible addresses (RFC 4291, deprecated) have no use
		// left; a host may still route them to the IPv4 address inside.
		{"::/96", "an IPv4-compatible address (deprecated)"},
		// Local-use NAT64 (RFC 8215) translates inside a network the
		// deployment runs, to addresses of its choosing.
		{"64:ff9b:1::/48", "a local-use NAT64 address"},
		{"169.254.0.0/16", "a link-local address"},
		{"fe80::/10", "a link-local address"},
		{"10.0.0.0/8", "a private address (RFC 1918)"},
		{"172.16.0.0/12", "a private address (RFC 1918)"},
		{"192.168.0.0/16", "a private address (RFC 1918)"},
		{"fc00::/7", "a private address (IPv6 ULA)"},
		{"100.64.0.0/10", "a shared address (carrier-grade NAT)"},
		{"192.0.0.0/24", "an IETF protocol address"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"224.0.0.0/4", "a multicast address"},
		{"ff00::/8", "a multicast address"},
		{"240.0.0.0/4", "a reserved address"},
	} {
		out = append(out, blockedRange{netip.MustParsePrefix(r[0]), r[1]})
	}
	return out
}()

// IPv6 ranges whose addresses carry an IPv4 address a packet to them may
// reach; that address is checked too.
var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): the IPv4 address is
	// in the last 32 bits.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// siit is the IPv4-translated prefix (RFC 2765): the last 32 bits.
	siit = netip.MustParsePrefix("::ffff:0:0:0/96")
	// sixToFour is 6to4 (RFC 3056): the IPv4 address is in bits 16 to 47.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// teredo (RFC 4380) names its server in bits 32 to 63 and its client,
	// inverted, in the last 32 bits.
	teredo = netip.MustParsePrefix("2001::/32")
)

// embedded is an IPv4 address inside an IPv6 one, and the form that holds
// it.
type embedded struct {
	addr netip.Addr
	form string
}

// embeddedIPv4 returns the IPv4 addresses ip leads to, if any.
func embeddedIPv4(ip netip.Addr) []embedded {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case nat64.Contains(ip):
		return []embedded{{v4(12), "NAT64"}}
	case siit.Contains(ip):
		return []embedded{{v4(12), "IPv4-translated"}}
	case sixToFour.Contains(ip):
		return []embedded{{v4(2), "6to4"}}
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embedded{{v4(4), "Teredo server"}, {client, "Teredo client"}}
	}
	return nil
}

// Policy decides which addresses outbound calls may reach.
type Policy struct {
	prefixes []netip.Prefix
	hosts    map[string]bool
}

// ParseAllow reads an allow list: comma- or space-separated CIDRs
// ("10.20.0.0/16"), addresses ("127.0.0.1", "::1") and host names
// ("sap.internal.example"). A host name allows whatever it resolves to.
func ParseAllow(list string) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		if pre, err := netip.ParsePrefix(f); err == nil {
			p.prefixes = append(p.prefixes, pre.Masked())
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		if !validHost(f) {
			return nil, fmt.Errorf("%s: %q is not a CIDR, an IP address or a host name", AllowEnv, f)
		}
		p.hosts[strings.ToLower(strings.TrimSuffix(f, "."))] = true
	}
	return p, nil
}

func validHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 || strings.ContainsAny(h, "/:") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// AllowsHost reports whether the allow list names host itself.
func (p *Policy) AllowsHost(host string) bool {
	return p != nil && p.hosts[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// Check returns a *RefusedError when ip is in a refused range and not
// allow-listed.
func (p *Policy) Check(ip netip.Addr) error {
	// Zoned addresses match no prefix; the zone does not change the range.
	ip = ip.Unmap().WithZone("")
	if p != nil {
		for _, pre := range p.prefixes {
			if pre.Contains(ip) {
				return nil
			}
		}
	}
	if why := refusal(ip); why != "" {
		return &RefusedError{Addr: ip, Why: why}
	}
	for _, e := range embeddedIPv4(ip) {
		if why := refusal(e.addr); why != "" {
			return &RefusedError{Addr: ip, Why: fmt.Sprintf("the %s form of %s, %s", e.form, e.addr, why)}
		}
	}
	return nil
}

// refusal says why ip is in a refused range, or "".
func refusal(ip netip.Addr) string {
	for _, r := range blocked {
		if r.prefix.Contains(ip) {
			return r.why
		}
	}
	return ""
}

// RefusedError says why an address may not be called.
type RefusedError struct {
	Addr netip.Addr
	Why  string
	// Host is the name the call asked for, when it was not the address
	// itself: the message names it and not the address it resolved to.
	Host string
}

func (e *RefusedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("refused to connect to %s: it resolves to %s; the deployment allows it only when %s lists it", e.Host, scrub(e.Why), AllowEnv)
	}
	return fmt.Sprintf("refused to connect to %s: it is %s; the deployment allows it only when %s lists it", e.Addr, e.Why, AllowEnv)
}

// checkAddress is the dialer's view: host:port of the resolved address.
func (p *Policy) checkAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		// The dialer resolves before Control runs; anything else is not an
		// address to trust.
		return fmt.Errorf("refused to connect to %q: not a resolved IP address", host)
	}
	return p.Check(ip)
}
