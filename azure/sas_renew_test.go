package azure

import (
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// TestAccountSASRenewal: the account SAS signed for a SharedKeyCredential
// is reused while more than sasMargin of it is left and signed again
// after; it allows every operation on every resource type, backdated,
// over either protocol for an http endpoint and https alone otherwise.
func TestAccountSASRenewal(t *testing.T) {
	cred, err := aztables.NewSharedKeyCredential("acct", "a2V5")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ endpoint, spr string }{
		{"http://127.0.0.1:10002/acct", "https,http"},
		{"https://acct.table.core.windows.net", "https"},
	} {
		c := newExtClient(tc.endpoint, "acct", nil, "", nil, nil)
		signs := 0
		sign := accountSASSigner(cred, c.root.Scheme)
		c.signSAS = func(start, expiry time.Time) (url.Values, error) {
			signs++
			return sign(start, expiry)
		}
		first, err := c.signature()
		if err != nil {
			t.Fatal(err)
		}
		if got := first.Get("spr"); got != tc.spr {
			t.Errorf("%s: spr = %q, want %q", tc.endpoint, got, tc.spr)
		}
		if first.Get("ss") != "t" || first.Get("srt") != "sco" || first.Get("sp") != "rwdlacu" || first.Get("sig") == "" {
			t.Errorf("%s: signature %v", tc.endpoint, first)
		}
		st, err1 := time.Parse(time.RFC3339, first.Get("st"))
		se, err2 := time.Parse(time.RFC3339, first.Get("se"))
		if err1 != nil || err2 != nil || se.Sub(st) != sasLifetime+sasBackdate || time.Until(st) > -sasBackdate+time.Minute {
			t.Errorf("%s: st %q, se %q", tc.endpoint, first.Get("st"), first.Get("se"))
		}
		if again, err := c.signature(); err != nil || signs != 1 || again.Get("sig") != first.Get("sig") {
			t.Fatalf("%s: a fresh signature was signed again (%d signs, %v)", tc.endpoint, signs, err)
		}
		// Less than the margin left: signed anew.
		c.sasUntil = time.Now().Add(sasMargin - time.Second)
		if _, err := c.signature(); err != nil || signs != 2 {
			t.Fatalf("%s: a signature about to run out was kept (%d signs, %v)", tc.endpoint, signs, err)
		}
	}
}
