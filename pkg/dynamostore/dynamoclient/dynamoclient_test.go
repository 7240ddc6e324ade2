package dynamoclient

import "testing"

func TestNew(t *testing.T) {
	// Nothing of the machine's AWS configuration may decide the region.
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"http://localhost:8000", true},
		{"https://dynamodb.local.test", true},
		{"localhost:8000", false},
		{"ftp://localhost", false},
		{"http://", false},
	} {
		c, err := New(t.Context(), tc.endpoint, "")
		if got := err == nil; got != tc.ok {
			t.Errorf("endpoint %q: got error %v, want ok %v", tc.endpoint, err, tc.ok)
			continue
		}
		if c == nil {
			continue
		}
		// A local endpoint needs no AWS account: fake credentials and a region.
		o := c.Options()
		if o.Region != "us-east-1" {
			t.Errorf("endpoint %q: got region %q, want us-east-1", tc.endpoint, o.Region)
		}
		creds, err := o.Credentials.Retrieve(t.Context())
		if err != nil || creds.AccessKeyID != "local" {
			t.Errorf("endpoint %q: got credentials %q, %v; want the fake static ones", tc.endpoint, creds.AccessKeyID, err)
		}
	}
}
