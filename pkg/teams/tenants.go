package teams

import (
	"fmt"
	"strings"
)

// EnvTenants names the setting that maps Entra tenants to organizations
// (ParseTenants).
const EnvTenants = "CARDFLOW_TEAMS_TENANTS"

// ParseTenants reads "tenant=organization" pairs, comma-separated:
// which organization the Teams conversations of each Microsoft Entra
// tenant belong to. A tenant belongs to one organization: naming it twice
// is refused.
// No pairs is a nil map.
func ParseTenants(s string) (map[string]string, error) {
	var out map[string]string
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		tenant, org, ok := strings.Cut(pair, "=")
		tenant, org = strings.TrimSpace(tenant), strings.TrimSpace(org)
		if !ok || tenant == "" || org == "" {
			return nil, fmt.Errorf("Teams tenants: %q is not tenant=organization", pair)
		}
		if prev, dup := out[tenant]; dup {
			return nil, fmt.Errorf("Teams tenants: tenant %s is mapped to %s and to %s; a tenant belongs to one organization", tenant, prev, org)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[tenant] = org
	}
	return out, nil
}
