package mailsync

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutOfOfficeMarksAutomaticRepliesByHeaderOrSubject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		autoSubmitted, subject string
		want                   bool
	}{
		{"auto-replied", "Re: Hello", true},
		{"Auto-Replied; owner-email=ada@example.com", "", true},
		{"", "Automatic reply: Hello", true},
		{"", "  OUT OF OFFICE until Monday", true},
		{"auto-generated", "Delivery Status Notification", false},
		{"no", "Re: Hello", false},
		{"", "Re: Out of office", false},
		{"", "Re: Hello", false},
	} {
		require.Equal(t, c.want, outOfOffice(c.autoSubmitted, c.subject), "%q %q", c.autoSubmitted, c.subject)
	}
}
