package unsubscribe_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
)

func TestThePagesEscapeTheAddressAndTheSenderAndLoadNothing(t *testing.T) {
	t.Parallel()
	r := unsubscribe.Recipient{Email: `"<b>x</b>"@example.net`, Sender: `Eve <script>alert(1)</script>`}
	for name, page := range map[string]string{"confirm": string(unsubscribe.ConfirmPage(r)), "done": string(unsubscribe.DonePage(r))} {
		require.NotContains(t, page, "<script>", name)
		require.NotContains(t, page, "<b>x</b>", name)
		require.Contains(t, page, "&lt;script&gt;", name)
		require.NotContains(t, page, "src=", name)
		require.NotContains(t, page, "http", name)
	}
	confirm := string(unsubscribe.ConfirmPage(r))
	require.Contains(t, confirm, `<form method="post">`, "the button posts back to the link it was loaded from")
	require.NotContains(t, string(unsubscribe.DonePage(r)), "<form", "the done page asks nothing more")
}
