package mailsync

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplyHeadersKeepTheFirstReferenceWhenTheChainIsTooLong(t *testing.T) {
	t.Parallel()
	chain := make([]string, 100)
	for i := range chain {
		chain[i] = fmt.Sprintf("<m%d@client.example>", i)
	}
	r := Reply{parent: "<parent@client.example>", references: chain}
	inReplyTo, refs := r.Headers([]string{"<m5@client.example>", "<other@client.example>"})
	require.Equal(t, "<other@client.example>", inReplyTo)
	require.Len(t, refs, maxReplyReferences)
	require.Equal(t, "<m0@client.example>", refs[0], "the conversation's root stays")
	require.Equal(t, []string{"<m99@client.example>", "<parent@client.example>", "<other@client.example>"}, refs[97:])
	require.NotContains(t, refs, "<m1@client.example>", "the middle goes first")

	inReplyTo, refs = Reply{parent: "<parent@client.example>"}.Headers(nil)
	require.Equal(t, "<parent@client.example>", inReplyTo)
	require.Equal(t, []string{"<parent@client.example>"}, refs)
}
