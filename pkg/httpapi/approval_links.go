package httpapi

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// approvalPage shows what stands on the page of an approver's personal
// link once it shows no form: what came of their answer, why it did not
// count, or the decision a late click finds, with every answer so far.
func approvalPage(b *strings.Builder, page *app.LinkPage) {
	ap := page.Approval
	pageStart(b, orDefault(page.StepName, "Approval"))
	requestedBy(b, ap)
	switch {
	case page.Note != "":
		para(b, page.Note)
	case page.Closed != "":
		para(b, page.Closed)
	case page.TimedOut:
		para(b, "This approval timed out before it was decided; nothing was recorded.")
	}
	if !ap.Open() && !page.Recorded {
		para(b, ap.EndNote())
	}
	if len(ap.Answers) == 0 {
		return
	}
	b.WriteString(`<section aria-labelledby="answers"><h2 id="answers">Answers</h2><dl>`)
	for _, ans := range ap.Answers {
		v := ans.Decision + " on " + pageTime(ans.At)
		if ans.Comment != "" {
			v += ": " + ans.Comment
		}
		fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd>", html.EscapeString(ans.Approver), html.EscapeString(v))
	}
	b.WriteString("</dl></section>")
}

// requestedBy says who asked for an approval: who triggered its
// execution, as authenticated.
func requestedBy(b *strings.Builder, ap *cardflow.Approval) {
	if ap != nil && ap.TriggeredBy != "" {
		fmt.Fprintf(b, `<p class="requester">Requested by %s</p>`, html.EscapeString(ap.TriggeredBy))
	}
}

func pageTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2 Jan 2006 15:04 MST") }
