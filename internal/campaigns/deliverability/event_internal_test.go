package deliverability

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func TestCheckedRefusesWhatIsNoBounceOrComplaintOfOneAddress(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ok := Event{Kind: KindBounce, Source: SourceIngest, Recipient: "Ada <ADA@Example.com>", Bounce: dsn.Hard}
	for name, c := range map[string]struct {
		change func(*Event)
		code   string
	}{
		"a bounce without its type":      {func(e *Event) { e.Bounce = "" }, "invalid_bounce_type"},
		"a kind no one posts":            {func(e *Event) { e.Kind = "delivered" }, "invalid_event_type"},
		"a domain instead of an address": {func(e *Event) { e.Recipient = "example.com" }, "invalid_recipient_email"},
		"no address at all":              {func(e *Event) { e.Recipient = "not an address" }, "invalid_recipient_email"},
	} {
		e := ok
		c.change(&e)
		_, err := e.checked(Match{}, now)
		var ae *apierror.Error
		require.True(t, errors.As(err, &ae), name)
		require.Equal(t, 400, ae.Status, name)
		require.Equal(t, c.code, ae.Code, name)
	}

	got, err := ok.checked(Match{}, now)
	require.NoError(t, err)
	require.Equal(t, "ada@example.com", got.Recipient)
	require.Equal(t, now, got.At, "an event without a time happened now")
	require.Empty(t, got.IdempotencyKey, "an event about no send is keyed only by its caller")

	task := dbq.SendTask{ID: uuid.New()}
	got, err = ok.checked(MatchSend(task, MatchedIngest), now)
	require.NoError(t, err)
	require.Equal(t, "bounce:hard:"+task.ID.String(), got.IdempotencyKey, "an event about a send is keyed by the send")
	complaint := Event{Kind: KindComplaint, Source: SourceARF, Recipient: "ada@example.com", Bounce: dsn.Soft, SMTPCode: 999}
	got, err = complaint.checked(MatchSend(task, MatchedMessageID), now)
	require.NoError(t, err)
	require.Empty(t, got.Bounce, "a complaint has no bounce type")
	require.Zero(t, got.SMTPCode, "a code outside SMTP's range is not kept")
	require.Equal(t, "complaint::"+task.ID.String(), got.IdempotencyKey)
}

func TestEvidenceSaysWhatTheServerOrProviderSaid(t *testing.T) {
	t.Parallel()
	require.Equal(t, "550 5.1.1 no such user", Event{Diagnostic: "550 5.1.1 no such user", StatusCode: "5.1.1"}.Evidence())
	require.Equal(t, "550 5.1.1 unknown_user", Event{SMTPCode: 550, StatusCode: "5.1.1", Reason: "unknown_user"}.Evidence())
	require.Equal(t, "feedback type abuse", Event{FeedbackType: "abuse"}.Evidence())
	require.Equal(t, "no details given", Event{}.Evidence())
}

func TestPercentKeepsThePrecisionARateNeeds(t *testing.T) {
	t.Parallel()
	require.Equal(t, "5.0%", percent(0.05))
	require.Equal(t, "0.30%", percent(0.003))
	require.Equal(t, "0.15%", percent(0.0015))
	require.Equal(t, "0.050%", percent(0.0005))
}
