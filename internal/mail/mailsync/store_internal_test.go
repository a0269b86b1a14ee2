package mailsync

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestASnippetIsTheFoldedStartOfTheTextOrOfTheHTMLsText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Hello there, Bob", snippet("  Hello\r\n\r\n  there,\tBob \n", "<p>ignored</p>"))
	require.Equal(t, "Hi & welcome to the launch", snippet(" \n", `<html><head><title>T</title><style>p{color:red}</style>
		<script>var x = "<p>";</script></head><body><p>Hi &amp;</p><div>welcome  to<br>the launch</div></body></html>`)[len("T "):])
	long := snippet(strings.Repeat("ü ", 300), "")
	require.Equal(t, strings.Repeat("ü ", maxSnippet/2-1)+"ü", long, "at most maxSnippet characters, never ending in a folded space")
	require.Empty(t, snippet("", ""))
}
