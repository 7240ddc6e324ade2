package sap

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DoAll reads a collection with a GET and follows the server's paging (V4's
// @odata.nextLink, V2's d.__next) until the last page or maxPages pages.
// Result holds the entries of every page, Body the last page's body and
// Pages the number of pages read. A collection with more pages than
// maxPages is an error rather than a silent cut, so a step never acts on
// part of a list believing it whole.
func (c *Client) DoAll(ctx context.Context, r Request, maxPages int) (*Response, error) {
	if normalMethod(r.Method) != http.MethodGet {
		return nil, fmt.Errorf("only a GET reads pages, not %s", r.Method)
	}
	if maxPages < 1 {
		return nil, fmt.Errorf("maxPages must be at least 1, not %d", maxPages)
	}
	r.Method = http.MethodGet
	target, err := c.URL(r)
	if err != nil {
		return nil, err
	}
	var all []any
	for page := 1; ; page++ {
		resp, err := c.do(ctx, r, target)
		if err != nil {
			return resp, err
		}
		entries, ok := resp.Result.([]any)
		if !ok {
			return resp, fmt.Errorf("GET %s: SAP answered with one entity, not a collection", redactQuery(target))
		}
		all = append(all, entries...)
		next := nextLink(c.p.ODataVersion, resp.Body)
		if next == "" {
			resp.Result, resp.Pages = all, page
			return resp, nil
		}
		if page == maxPages {
			return resp, fmt.Errorf("GET %s: SAP has more than %d pages of results; narrow the query with $filter or $top", redactQuery(target), maxPages)
		}
		if target, err = c.follow(target, next); err != nil {
			return resp, err
		}
	}
}

// nextLink is the link to a collection's next page, "" on the last one.
func nextLink(version string, body any) string {
	m, _ := body.(map[string]any)
	if version == V2 {
		m, _ = m["d"].(map[string]any)
		s, _ := m["__next"].(string)
		return s
	}
	s, _ := m["@odata.nextLink"].(string)
	return s
}

// follow resolves a next link against the page it came on. It must stay on
// the profile's host: the client's credentials go with it. The link keeps
// sap-client, which some services leave out of it.
func (c *Client) follow(page, next string) (string, error) {
	base, err := url.Parse(page)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("SAP's next page link %q is not a URL", next)
	}
	u := base.ResolveReference(ref)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("SAP's next page link leads to %s://%s, away from %s://%s; the client does not send its credentials there", u.Scheme, u.Host, base.Scheme, base.Host)
	}
	if c.p.Client != "" {
		q := u.Query()
		if q.Get("sap-client") == "" {
			q.Set("sap-client", c.p.Client)
			u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		}
	}
	return u.String(), nil
}
