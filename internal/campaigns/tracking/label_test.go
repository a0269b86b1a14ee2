package tracking

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestLinkLabelIsTheTextOfTheAnchorTheClickTokenNames(t *testing.T) {
	t.Parallel()
	s, err := NewSigner(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	org, task, other := uuid.New(), uuid.New(), uuid.New()
	link := func(task uuid.UUID, index int) string {
		tok, err := s.Sign(Token{Kind: KindClick, OrganizationID: org, TaskID: task, LinkIndex: index, URL: "https://example.com/x"})
		require.NoError(t, err)
		return "https://t.outflow.test/t/c/" + tok
	}
	body := `<html><body><p>Hi <a href="` + link(task, 0) + `">see   our
		<b>pricing</b></a>, <a href="https://example.com/raw">untracked</a> or
		<a href="` + link(task, 1) + `"><img src="x.png" alt="Book a demo"></a>
		<a href="` + link(other, 2) + `">another send's link</a>
		<a href="` + link(task, 3) + `"></a>
		<a href="` + link(task, 4) + `">` + strings.Repeat("é", 300) + `</a></p></body></html>`
	require.Equal(t, "see our pricing", s.linkLabel(body, task, 0), "whitespace collapsed, inner tags' text kept")
	require.Equal(t, "Book a demo", s.linkLabel(body, task, 1), "an image link is labelled by its alt text")
	require.Empty(t, s.linkLabel(body, task, 2), "a token of another send does not name this send's link")
	require.Empty(t, s.linkLabel(body, task, 3), "a link without text has no label")
	require.Equal(t, strings.Repeat("é", maxLabelLength), s.linkLabel(body, task, 4), "a long label is cut in characters")
	require.Empty(t, s.linkLabel(body, task, 5), "a link of the plain body only is not in the HTML")
	require.Empty(t, s.linkLabel("", task, 0))
}
