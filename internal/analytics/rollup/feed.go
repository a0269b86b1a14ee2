package rollup

import (
	"context"

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
	facts := make([]Fact, 0, len(rows))
	for _, r := range rows {
		facts = append(facts, fact(r.What, Fact{At: r.At, Kind: r.Kind, Campaign: r.CampaignID.UUID, Step: r.StepID.UUID,
			Variant: r.VariantID.UUID, Mailbox: r.MailboxID.UUID, Provider: r.Provider}))
	}
	return Apply(ctx, tx, org, facts)
}

// Intents counts the inbound messages ids just classified: one intent each for those that answer a send, on
// their received time.
func Intents(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids ...uuid.UUID) error {
	rows, err := queries.RollupIntents(ctx, tx, dbq.RollupIntentsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return err
	}
	facts := make([]Fact, 0, len(rows))
	for _, r := range rows {
		facts = append(facts, fact(r.What, Fact{At: r.At, Kind: r.Kind, Campaign: r.CampaignID.UUID, Step: r.StepID.UUID,
			Variant: r.VariantID.UUID, Mailbox: r.MailboxID.UUID, Provider: r.Provider}))
	}
	return Apply(ctx, tx, org, facts)
}

// Engagement is what sends' opens and clicks counted before a tracking batch; Settle counts what the batch
// changed. Read it with Engaged under the organization's tracking lock, before the batch is stored.
type Engagement struct {
	org    uuid.UUID
	ids    []uuid.UUID
	before map[uuid.UUID]dbq.RollupEngagementRow
}

// Engaged reads what the opens and clicks of the sends ids count now.
func Engaged(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids []uuid.UUID) (*Engagement, error) {
	rows, err := queries.RollupEngagement(ctx, tx, dbq.RollupEngagementParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return nil, err
	}
	e := &Engagement{org: org, ids: ids, before: make(map[uuid.UUID]dbq.RollupEngagementRow, len(rows))}
	for _, r := range rows {
		e.before[r.ID] = r
	}
	return e, nil
}

// Settle reads the sends again and counts the difference: a first open or click, a machine-only send a
// person's open or click takes back (or a re-judged click gives back), a first time moved earlier; on the
// counter rows and on the campaign contacts' rows alike.
func (e *Engagement) Settle(ctx context.Context, tx pgx.Tx) error {
	rows, err := queries.RollupEngagement(ctx, tx, dbq.RollupEngagementParams{OrganizationID: e.org, Ids: e.ids})
	if err != nil {
		return err
	}
	var facts []Fact
	var people contactDeltas
	for _, after := range rows {
		before, ok := e.before[after.ID]
		if ok && before == after {
			continue
		}
		facts = append(facts, engaged(after, 1)...)
		people.add(after, 1)
		if ok {
			facts = append(facts, engaged(before, -1)...)
			people.add(before, -1)
		}
	}
	if err := Apply(ctx, tx, e.org, facts); err != nil {
		return err
	}
	return people.apply(ctx, tx, e.org)
}

// engaged is what a send's opens and clicks count, times sign.
func engaged(r dbq.RollupEngagementRow, sign int64) []Fact {
	base := Fact{Kind: r.Kind, Campaign: r.CampaignID.UUID, Step: r.StepID.UUID, Variant: r.VariantID.UUID,
		Mailbox: r.MailboxID.UUID, Provider: r.Provider}
	var out []Fact
	if r.Opened {
		f := base
		f.At, f.Opens = r.FirstOpen, sign
		if !r.HumanOpen {
			f.MachineOpens = sign
		}
		out = append(out, f)
	}
	if r.Clicked {
		f := base
		f.At, f.Clicks = r.FirstClick, sign
		if !r.HumanClick {
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
