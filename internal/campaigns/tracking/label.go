package tracking

import (
	"strings"

	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// maxLabelLength bounds a link label (characters): enough for any anchor text a reader would call a label.
const maxLabelLength = 200

// linkLabel is the text a reader saw on link index of send task in the sent HTML body (the anchor's text,
// an image's alt text standing in for it, whitespace collapsed), so campaign.email_clicked can say which link
// was clicked in the words of the message. The link is found by its click token, not by its position, so
// untracked links in between do not shift it. "" when the HTML body has no such link (a link of the plain
// body only) or the link has no text.
func (s *Signer) linkLabel(body string, task uuid.UUID, index int) string {
	z := html.NewTokenizer(strings.NewReader(body))
	var text strings.Builder
	inside := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			switch {
			case string(name) == "a" && !inside:
				for more {
					var k, v []byte
					k, v, more = z.TagAttr()
					if string(k) == "href" && s.isLink(string(v), task, index) {
						inside = true
					}
				}
			case string(name) == "img" && inside:
				for more {
					var k, v []byte
					k, v, more = z.TagAttr()
					if string(k) == "alt" {
						text.WriteString(" " + string(v) + " ")
					}
				}
			}
		case html.TextToken:
			if inside {
				text.Write(z.Text())
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); inside && string(name) == "a" {
				return truncate.Chars(strings.Join(strings.Fields(text.String()), " "), maxLabelLength)
			}
		}
	}
}

// isLink reports whether href is the tracked link index of task: a /t/c/ URL whose token verifies and names
// them.
func (s *Signer) isLink(href string, task uuid.UUID, index int) bool {
	_, token, ok := strings.Cut(href, "/t/c/")
	if !ok {
		return false
	}
	if end := strings.IndexAny(token, "/?#"); end >= 0 {
		token = token[:end]
	}
	t, err := s.Parse(token, KindClick)
	return err == nil && t.TaskID == task && t.LinkIndex == index
}
