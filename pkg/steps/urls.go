package steps

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/cardflow/cardflow/pkg/expr"
)

// urlPart is the part of a URL a placeholder stands in, as the template's
// literal text before it says.
type urlPart int

const (
	inScheme urlPart = iota // before "://"
	inHost                  // after "://", before the path: host, port or user
	inPath                  // the path
	inQuery                 // the query or the fragment
	// inOption is the value of an OData system query option ($filter,
	// $orderby, ...) of an erp step, escaped later with the whole query.
	inOption
)

// slot is where one placeholder of a URL template stands, which says how
// its value is written.
type slot struct {
	part urlPart
	// quoted is set inside an OData string literal ('...') of an erp
	// entity or query option; bare outside one.
	quoted, bare bool
}

var (
	// hostValue is what a value in the host may hold: a name, a part of
	// one, or a port.
	hostValue = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)
	// bareValue is what a value outside quotes in an OData entity may hold:
	// a number, a bool, a date, a time, a GUID, a name. OData reads %28 as
	// "(" and %27 as "'", so escaping alone would not keep such a value
	// from changing the key or the path.
	bareValue = regexp.MustCompile(`^[A-Za-z0-9._:+-]+$`)
)

// urlTemplate is an http step's url or an erp step's entity: a template
// whose values are written escaped for where their placeholders stand, so
// that no value changes the structure of the URL.
type urlTemplate struct {
	key      string // the config key, for messages
	t        *expr.Template
	literals []string
	slots    []slot
	// raw is set for an http url that is one placeholder: the value is the
	// whole URL, taken as it is.
	raw bool
	// paths is set when a placeholder stands in the path.
	paths bool
	// relative is set for an entity, a path (and query) under the service.
	relative bool
}

// compileURL compiles an http step's url. A placeholder before "://" is
// refused unless it is the whole url.
func compileURL(env *expr.Env, src string) (*urlTemplate, error) {
	u, err := compileURLTemplate(env, "url", src, inScheme, false)
	if err != nil {
		return nil, err
	}
	if len(u.slots) == 1 && strings.TrimSpace(u.literals[0]) == "" && strings.TrimSpace(u.literals[1]) == "" {
		u.raw = true
		return u, nil
	}
	if len(u.slots) > 0 && u.slots[0].part == inScheme {
		return nil, errors.New(`config.url: a placeholder stands before "://"; write the URL's scheme and host, or make the whole url one placeholder, such as "{{ input.callback_url }}", which is taken as it is`)
	}
	return u, nil
}

// compileEntity compiles an erp step's entity, the path under its service:
// inside an OData string literal ('...') a value is quoted as OData quotes
// it, outside one it must be a plain token.
func compileEntity(env *expr.Env, src string) (*urlTemplate, error) {
	u, err := compileURLTemplate(env, "entity", src, inPath, true)
	if err != nil {
		return nil, err
	}
	u.relative = true
	return u, nil
}

// compileODataOption compiles the value of an erp step's OData system
// query option, such as $filter: inside a string literal a value is quoted
// as OData quotes it, outside one it must be a plain token, so that no
// value changes the expression. A value that is one placeholder is the
// whole option, taken as it is, for templates that build it on purpose.
func compileODataOption(env *expr.Env, name, src string) (*urlTemplate, error) {
	u, err := compileURLTemplate(env, "query."+name, src, inOption, true)
	if err != nil {
		return nil, err
	}
	u.raw = len(u.slots) == 1 && strings.TrimSpace(u.literals[0]) == "" && strings.TrimSpace(u.literals[1]) == ""
	return u, nil
}

func compileURLTemplate(env *expr.Env, key, src string, part urlPart, odata bool) (*urlTemplate, error) {
	t, err := env.CompileTemplate(src)
	if err != nil {
		return nil, fmt.Errorf("config.%s: %w", key, err)
	}
	u := &urlTemplate{key: key, t: t, literals: t.Literals()}
	quoted := false
	for i, lit := range u.literals {
		part, quoted = scanURL(lit, part, quoted, odata)
		if i < len(u.literals)-1 {
			u.slots = append(u.slots, slot{part: part, quoted: quoted, bare: odata && !quoted})
			u.paths = u.paths || part == inPath
		}
	}
	return u, nil
}

// scanURL follows a template's literal text from part: "://" ends the
// scheme, "/" the host, "?" and "#" the path; in an OData entity or query
// option each "'" opens or closes a string literal (a doubled one closes
// and reopens it).
func scanURL(lit string, part urlPart, quoted, odata bool) (urlPart, bool) {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case part == inOption:
			if c == '\'' {
				quoted = !quoted
			}
		case part == inScheme:
			if strings.HasPrefix(lit[i:], "://") {
				part, i = inHost, i+2
			}
		case c == '\'' && odata:
			quoted = !quoted
		case c == '?' || c == '#':
			part = inQuery
		case c == '/' && part == inHost:
			part = inPath
		}
	}
	return part, quoted
}

// render evaluates the template, writing each value escaped for its place.
func (u *urlTemplate) render(ctx context.Context, vars expr.Vars) (string, error) {
	vals, err := u.t.EvalPlaceholders(ctx, vars)
	if err != nil {
		return "", fmt.Errorf("%s: %v", u.key, err)
	}
	if u.raw {
		return text(vals[0]), nil
	}
	var b strings.Builder
	for i, lit := range u.literals {
		b.WriteString(lit)
		if i < len(vals) {
			v, err := u.slots[i].write(text(vals[i]))
			if err != nil {
				return "", fmt.Errorf("%s: %v", u.key, err)
			}
			b.WriteString(v)
		}
	}
	out := b.String()
	if u.paths {
		if seg := dotSegment(u.pathOf(out)); seg != "" {
			return "", fmt.Errorf("%s: the path %q has a segment %q, which would move the call to another path", u.key, u.pathOf(out), seg)
		}
	}
	return out, nil
}

// pathOf is the escaped path of a rendered url or entity.
func (u *urlTemplate) pathOf(s string) string {
	if u.relative {
		path, _, _ := strings.Cut(s, "?")
		path, _, _ = strings.Cut(path, "#")
		return path
	}
	p, err := url.Parse(s)
	if err != nil {
		return "" // the caller refuses what is no URL
	}
	return p.EscapedPath()
}

// dotSegment returns the first segment of an escaped path that is "." or
// "..", unescaped as a server unescapes it.
func dotSegment(path string) string {
	for seg := range strings.SplitSeq(path, "/") {
		if s, err := url.PathUnescape(seg); err == nil && (s == "." || s == "..") {
			return seg
		}
	}
	return ""
}

// write escapes a value for its slot: in the host it must be a name or a
// port; in an OData string literal each "'" is doubled; outside one, in an
// entity, it must be a plain token; then it is escaped as a path segment
// or a query component.
func (s slot) write(v string) (string, error) {
	switch {
	case s.part == inHost:
		if !hostValue.MatchString(v) {
			return "", fmt.Errorf("%s cannot stand in the host: a value there may hold letters, digits, - and . only", shown(v))
		}
		return v, nil
	case s.quoted:
		v = strings.ReplaceAll(v, "'", "''")
	case s.bare:
		if !bareValue.MatchString(v) {
			return "", fmt.Errorf("%s cannot stand outside quotes: a value there may hold letters, digits and . _ : + - only; quote a string, as in %s", shown(v), s.quoteExample())
		}
	}
	switch s.part {
	case inOption:
		return v, nil
	case inQuery:
		return url.QueryEscape(v), nil
	}
	return url.PathEscape(v), nil
}

// quoteExample shows how a string is quoted where the slot stands.
func (s slot) quoteExample() string {
	if s.part == inOption {
		return "PurchaseOrder eq '{{ input.po }}'"
	}
	return "A_PurchaseOrder('{{ input.po }}')"
}

// shown quotes a value for a message, cut to a readable length.
func shown(v string) string {
	const most = 64
	if len(v) > most {
		return fmt.Sprintf("%q...", v[:most])
	}
	return fmt.Sprintf("%q", v)
}
