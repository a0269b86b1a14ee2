package compose

import (
	"html"
	"strings"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// Unsubscribe is what a campaign send gives Compose for the unsubscribe line at the end of its bodies: the
// campaign's advanced unsubscribe block and the recipient's unsubscribe page, which the line's link mode
// points at (the same page the List-Unsubscribe header names).
type Unsubscribe struct {
	// Line is the campaign's unsubscribe block (campaign.Advanced): mode text, link or off, and its words.
	Line campaign.Unsubscribe
	// URL is the recipient's unsubscribe page (BaseURL/u/{token}); without one, mode link appends nothing.
	URL string
}

// unsubscribeLine appends in's unsubscribe line to each body that exists: mode text appends the text, mode
// link the intro and a link reading link_text (in the plain body, the link text and the address), mode off
// nothing. The line comes after the rendered content, so link tracking never rewrites its link and variables
// in it are not rendered; the sender's signature, when the pipeline appends one, follows it.
func (in Input) unsubscribeLine(plain, body string) (string, string) {
	u := in.Unsubscribe
	if u == nil {
		return plain, body
	}
	var text, tag string
	switch l := u.Line; {
	case l.Mode == "text" && strings.TrimSpace(l.Text) != "":
		text = l.Text
		tag = "<p>" + html.EscapeString(l.Text) + "</p>"
	case l.Mode == "link" && u.URL != "" && strings.TrimSpace(l.LinkText) != "":
		intro := strings.TrimSpace(l.LinkIntro)
		text = strings.TrimSpace(intro+" "+l.LinkText) + ": " + u.URL
		if intro != "" {
			intro = html.EscapeString(intro) + " "
		}
		tag = "<p>" + intro + `<a href="` + html.EscapeString(u.URL) + `">` + html.EscapeString(l.LinkText) + "</a></p>"
	default:
		return plain, body
	}
	if strings.TrimSpace(plain) != "" {
		plain += "\n\n" + text
	}
	if strings.TrimSpace(body) != "" {
		body = beforeBodyEnd(body, tag)
	}
	return plain, body
}

// beforeBodyEnd inserts s into an HTML body before its </body> (any case) when it has one, else at the end.
func beforeBodyEnd(body, s string) string {
	const end = "</body>"
	for i := len(body) - len(end); i >= 0; i-- {
		if strings.EqualFold(body[i:i+len(end)], end) {
			return body[:i] + s + body[i:]
		}
	}
	return body + s
}
