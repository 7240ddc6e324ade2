package sfnrunner

import "testing"

// TestGiveUpReason: the reason carries the message of cardflow's own
// errors, written for users, and only the name of any other.
func TestGiveUpReason(t *testing.T) {
	for _, tc := range []struct {
		in   GiveUpInput
		want string
	}{
		{GiveUpInput{"Error", `{"errorMessage":"cardflow: UNAVAILABLE: the store cannot be reached","errorType":"Error"}`},
			"the runner gave up after its retries: Error: the store cannot be reached"},
		{GiveUpInput{"errorString", `{"errorMessage":"dial tcp 10.0.0.7:443: connection refused","errorType":"errorString"}`},
			"the runner gave up after its retries: errorString"},
		{GiveUpInput{"States.Timeout", "the task timed out"}, "the runner gave up after its retries: States.Timeout"},
		{GiveUpInput{"Lambda.Unknown", ""}, "the runner gave up after its retries: Lambda.Unknown"},
	} {
		if got := giveUpReason(tc.in); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
