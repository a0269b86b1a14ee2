package truncate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/truncate"
)

func TestCharsCountsCharactersNotBytes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "héllo", truncate.Chars("héllo wörld", 5))
	require.Equal(t, "日本", truncate.Chars("日本語", 2))
	require.Equal(t, "short", truncate.Chars("short", 80), "text within the limit is kept whole")
	require.Empty(t, truncate.Chars("anything", 0))
}
