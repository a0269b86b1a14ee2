package rollup

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// Sent counts the sends ids the send pipeline just recorded as sent, on their sent_at; a send not sent (or
// gone) counts nothing.
func Sent(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids ...uuid.UUID) error {
	rows, err := queries.RollupSends(ctx, tx, dbq.RollupSendsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	var facts []Fact
	for _, r := range rows {
		if r.Status == "sent" && r.SentAt != nil {
			f := sendFact(r)
			f.At, f.Sent = *r.SentAt, 1
			facts = append(facts, f)
		}
	}
	return Apply(ctx, tx, org, facts)
}

// Replied counts the sends ids whose first reply was just stamped, on replied_at.
func Replied(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids ...uuid.UUID) error {
	rows, err := queries.RollupSends(ctx, tx, dbq.RollupSendsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	var facts []Fact
	for _, r := range rows {
		if r.RepliedAt != nil {
			f := sendFact(r)
			f.At, f.Replies = *r.RepliedAt, 1
			facts = append(facts, f)
		}
	}
	return Apply(ctx, tx, org, facts)
}

// Events counts the deliverability events ids just recorded: bounces, complaints and unsubscribes (other types
// count nothing), on their time.
func Events(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids ...uuid.UUID) error {
	rows, err := queries.RollupEvents(ctx, tx, dbq.RollupEventsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	return Apply(ctx, tx, org, attributed(rows))
}

// Intents counts the inbound messages ids just classified: one intent each for those that answer a send, on
// their received time.
func Intents(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids ...uuid.UUID) error {
	rows, err := queries.RollupIntents(ctx, tx, dbq.RollupIntentsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	events := make([]dbq.RollupEventsRow, len(rows))
	for i, r := range rows {
		events[i] = dbq.RollupEventsRow(r) // the same attributed row, read from inbox_messages
	}
	return Apply(ctx, tx, org, attributed(events))
}

// attributed is the facts of rows that each count one of what, attributed as the row says.
func attributed(rows []dbq.RollupEventsRow) []Fact {
	facts := make([]Fact, 0, len(rows))
	for _, r := range rows {
		facts = append(facts, fact(r.What, Fact{At: r.At, Kind: r.Kind, Campaign: r.CampaignID.UUID, Step: r.StepID.UUID,
			Variant: r.VariantID.UUID, Mailbox: r.MailboxID.UUID, Provider: r.Provider}))
	}
	return facts
}

// Engagement is what one send's opens and clicks count in the rollups, with the send's attribution: the
// tracking writer reads it with the sends a batch names (under the organization's tracking lock), derives
// what the batch leaves (Open, Click, Rejudge) and hands both to Count.
type Engagement struct {
	// Kind, Campaign, Step, Variant, Mailbox, Provider attribute the send (KindCampaign, ...; uuid.Nil none).
	Kind                             string
	Campaign, Step, Variant, Mailbox uuid.UUID
	Provider                         string
	// Opened says whether the send has an open, FirstOpen is the earliest, HumanOpen whether one is a person's.
	Opened, HumanOpen bool
	FirstOpen         time.Time
	// Clicked says whether the send has a click, FirstClick is the earliest, HumanClicks how many are a person's.
	Clicked     bool
	FirstClick  time.Time
	HumanClicks int
}

// Open is e with one more open at at, a person's when human.
func (e Engagement) Open(at time.Time, human bool) Engagement {
	if !e.Opened || at.Before(e.FirstOpen) {
		e.FirstOpen = at
	}
	e.Opened, e.HumanOpen = true, e.HumanOpen || human
	return e
}

// Click is e with one more click at at, a person's when human.
func (e Engagement) Click(at time.Time, human bool) Engagement {
	if !e.Clicked || at.Before(e.FirstClick) {
		e.FirstClick = at
	}
	e.Clicked = true
	if human {
		e.HumanClicks++
	}
	return e
}

// Rejudge is e with one of its person's clicks re-judged a machine's (a burst a later click made).
func (e Engagement) Rejudge() Engagement {
	e.HumanClicks = max(e.HumanClicks-1, 0)
	return e
}

// Change is one send's engagement before and after a tracking batch.
type Change struct{ Before, After Engagement }

// Count counts what changes changed: a first open or click, a machine-only send a person's open or click
// takes back (or a re-judged click gives back), a first time moved earlier. A change that changed nothing
// counts nothing.
func Count(ctx context.Context, tx pgx.Tx, org uuid.UUID, changes []Change) error {
	var facts []Fact
	for _, c := range changes {
		if c.Before.counts() != c.After.counts() {
			facts = append(facts, c.After.facts(1)...)
			facts = append(facts, c.Before.facts(-1)...)
		}
	}
	return Apply(ctx, tx, org, facts)
}

// counted is what of an Engagement the rollups count: a send clicked by people twice counts as once.
type counted struct {
	opened, humanOpen, clicked, humanClick bool
	firstOpen, firstClick                  time.Time
}

func (e Engagement) counts() counted {
	return counted{opened: e.Opened, humanOpen: e.HumanOpen, clicked: e.Clicked, humanClick: e.HumanClicks > 0,
		firstOpen: e.FirstOpen, firstClick: e.FirstClick}
}

// facts are what the send's opens and clicks count, times sign.
func (e Engagement) facts(sign int64) []Fact {
	base := Fact{Kind: e.Kind, Campaign: e.Campaign, Step: e.Step, Variant: e.Variant, Mailbox: e.Mailbox, Provider: e.Provider}
	var out []Fact
	if e.Opened {
		f := base
		f.At, f.Opens = e.FirstOpen, sign
		if !e.HumanOpen {
			f.MachineOpens = sign
		}
		out = append(out, f)
	}
	if e.Clicked {
		f := base
		f.At, f.Clicks = e.FirstClick, sign
		if e.HumanClicks == 0 {
			f.MachineClicks = sign
		}
		out = append(out, f)
	}
	return out
}

// sendFact is a fact attributed to the send r, without time or counts.
func sendFact(r dbq.RollupSendsRow) Fact {
	return Fact{Kind: r.Kind, Campaign: r.CampaignID.UUID, Step: r.StepID.UUID, Variant: r.VariantID.UUID,
		Mailbox: r.MailboxID.UUID, Provider: r.Provider}
}

// fact is f counting one of what (as the rollup queries name it: bounce_hard, complaint, intent_positive, ...).
func fact(what string, f Fact) Fact {
	c := &f.Counters
	switch what {
	case "bounce_hard":
		c.BouncesHard = 1
	case "bounce_soft":
		c.BouncesSoft = 1
	case "complaint":
		c.Complaints = 1
	case "unsubscribe":
		c.Unsubscribes = 1
	case "intent_positive":
		c.IntentPositive = 1
	case "intent_negative":
		c.IntentNegative = 1
	case "intent_question":
		c.IntentQuestion = 1
	case "intent_neutral":
		c.IntentNeutral = 1
	case "intent_out_of_office":
		c.IntentOutOfOffice = 1
	case "intent_automated":
		c.IntentAutomated = 1
	}
	return f
}
