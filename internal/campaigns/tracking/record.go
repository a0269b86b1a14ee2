package tracking

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// Options say how the Batcher judges the events it writes and what it raises for them.
type Options struct {
	// Windows are the classification windows (the deployment's, validated at start).
	Windows Windows
	// Outbox records campaign.email_opened for human opens, and its job inserter enqueues each human click's
	// deferred effects (ClickArgs), in the transaction that stores the events.
	Outbox *events.Outbox
}

// record judges one organization's events and stores them with their verdicts and rules in tx, so no event
// is ever stored unjudged (a process killed after the commit has lost nothing; one killed before it never
// wrote the events). In the same transaction it applies what the events cause: a send's first human open
// stamps opened_at, counts on its lead (upgrading a machine open counted before) and raises
// campaign.email_opened; a send opened only by machines so far counts as machine_opened once; a human
// click's effects are enqueued for EffectsAt (ClickArgs); a human click still waiting for its effects that
// a click of this batch turns into a burst is re-judged a machine's; and, last, the analytics rollups count
// what the batch changed (countRollups). The organization's tracking lock makes
// every batch see the clicks and counts of the batches before it. Each step is one statement over the whole
// batch.
func (b *Batcher) record(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received) error {
	q := b.queries
	if err := q.TrackingLock(ctx, tx, org); err != nil {
		return err
	}
	for i := range evs {
		// Judged at the precision Postgres keeps, so a click is compared with the stored clicks and the
		// dispatch time exactly as a later batch will read it back.
		evs[i].At = evs[i].At.Truncate(time.Microsecond)
	}
	slices.SortStableFunc(evs, func(x, y Received) int { return x.At.Compare(y.At) })
	tasks, err := b.tasks(ctx, tx, org, evs)
	if err != nil {
		return err
	}
	near, err := b.nearClicks(ctx, tx, org, evs)
	if err != nil {
		return err
	}
	decisions, rejudged := judge(evs, tasks, near, b.opts.Windows)
	p := dbq.TrackingEventsInsertParams{OrganizationID: org}
	var clicks []river.InsertManyParams
	for i, e := range evs {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		kind := "open"
		if e.Token.Kind == KindClick {
			kind = "click"
		}
		d := decisions[i]
		due := b.opts.Windows.EffectsAt(e.At)
		p.Ids = append(p.Ids, id)
		p.TaskIds = append(p.TaskIds, e.Token.TaskID)
		p.Kinds = append(p.Kinds, kind)
		p.Ats = append(p.Ats, e.At)
		p.Uas = append(p.Uas, storedUserAgent(e.UserAgent))
		p.IpHashes = append(p.IpHashes, e.IPHash)
		p.Networks = append(p.Networks, e.SourceNetwork)
		p.Scanners = append(p.Scanners, e.Source.Scanner)
		p.Probables = append(p.Probables, e.Source.ScannerProbable)
		p.Proxies = append(p.Proxies, e.Source.PrivacyProxy != "")
		p.LinkIndexes = append(p.LinkIndexes, int32(e.Token.LinkIndex))
		p.Urls = append(p.Urls, e.Token.URL)
		p.Tickets = append(p.Tickets, e.TicketIssued)
		p.Verdicts = append(p.Verdicts, string(d.Verdict))
		p.Rules = append(p.Rules, string(d.Rule))
		// A human click of a send that still exists waits for its effects; one of a deleted send has none.
		_, exists := tasks[e.Token.TaskID]
		pending := kind == "click" && d.Verdict == VerdictHuman && exists
		p.Dues, p.Pendings = append(p.Dues, due), append(p.Pendings, pending)
		p.Countries = append(p.Countries, e.Country)
		if pending {
			clicks = append(clicks, river.InsertManyParams{Args: ClickArgs{OrganizationID: org, EventID: id},
				InsertOpts: &river.InsertOpts{ScheduledAt: due}})
		}
	}
	if _, err := q.TrackingEventsInsert(ctx, tx, p); err != nil {
		return err
	}
	if len(rejudged) > 0 {
		if _, err := q.TrackingClicksRejudge(ctx, tx, dbq.TrackingClicksRejudgeParams{OrganizationID: org, Ids: rejudged,
			Rule: string(RuleBurst)}); err != nil {
			return err
		}
	}
	if len(clicks) > 0 {
		if _, err := b.opts.Outbox.Jobs().InsertManyTx(ctx, tx, clicks); err != nil {
			return err
		}
	}
	if err := engagement.Record(ctx, tx, org, humanOpens(evs, decisions, tasks)); err != nil {
		return err
	}
	if err := b.opens(ctx, tx, org, evs, decisions, tasks); err != nil {
		return err
	}
	if err := b.machineClicks(ctx, tx, org, evs, decisions, tasks, near, rejudged); err != nil {
		return err
	}
	return countRollups(ctx, tx, org, evs, decisions, tasks, near, rejudged)
}

// machineClicks counts on their leads the sends the batch leaves clicked by a machine (a machine's click, or a
// person's pending click re-judged a burst) that were not before, while no person's click has applied to them
// (clicked_at): the lead's machine_clicked is its sends clicked only by machines so far.
func (b *Batcher) machineClicks(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received, decisions []Decision,
	tasks map[uuid.UUID]dbq.TrackingTasksRow, near []dbq.TrackingClicksNearRow, rejudged []uuid.UUID) error {
	clicked := map[uuid.UUID]bool{}
	for i, e := range evs {
		if e.Token.Kind == KindClick && decisions[i].Verdict == VerdictMachine {
			clicked[e.Token.TaskID] = true
		}
	}
	for _, c := range near {
		if slices.Contains(rejudged, c.ID) {
			clicked[c.TaskID] = true
		}
	}
	counts := leadCounts{OrganizationID: org}
	for id := range clicked {
		if t, ok := tasks[id]; ok && !t.MachineClicked && t.ClickedAt == nil {
			counts.add(t, 0, 0, 0, 1, time.Time{})
		}
	}
	return counts.apply(ctx, tx, b.queries)
}

// tasks reads the sends evs name, by id; a send deleted since is missing.
func (b *Batcher) tasks(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received) (map[uuid.UUID]dbq.TrackingTasksRow, error) {
	ids := make([]uuid.UUID, 0, len(evs))
	seen := make(map[uuid.UUID]bool, len(evs))
	for _, e := range evs {
		if !seen[e.Token.TaskID] {
			seen[e.Token.TaskID] = true
			ids = append(ids, e.Token.TaskID)
		}
	}
	rows, err := b.queries.TrackingTasks(ctx, tx, dbq.TrackingTasksParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]dbq.TrackingTasksRow, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// nearClicks reads the stored clicks the burst rule may pair with evs' clicks: on the same sends, within the
// burst window of the first and last of those clicks, from the same source as one of them on another link.
func (b *Batcher) nearClicks(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received) ([]dbq.TrackingClicksNearRow, error) {
	type tuple struct {
		task          uuid.UUID
		link          int
		hash, network string
	}
	p := dbq.TrackingClicksNearParams{OrganizationID: org}
	seen := map[tuple]bool{}
	for _, e := range evs {
		if e.Token.Kind != KindClick {
			continue
		}
		if !slices.Contains(p.TaskIds, e.Token.TaskID) {
			p.TaskIds = append(p.TaskIds, e.Token.TaskID)
		}
		if p.Since.IsZero() || e.At.Before(p.Since) {
			p.Since = e.At
		}
		if e.At.After(p.Until) {
			p.Until = e.At
		}
		if k := (tuple{e.Token.TaskID, e.Token.LinkIndex, e.IPHash, e.SourceNetwork}); !seen[k] {
			seen[k] = true
			p.TupleTasks, p.TupleLinks = append(p.TupleTasks, k.task), append(p.TupleLinks, int32(k.link))
			p.TupleHashes, p.TupleNetworks = append(p.TupleHashes, k.hash), append(p.TupleNetworks, k.network)
		}
	}
	if len(p.TaskIds) == 0 {
		return nil, nil
	}
	p.Since, p.Until = p.Since.Add(-b.opts.Windows.Burst), p.Until.Add(b.opts.Windows.Burst)
	return b.queries.TrackingClicksNear(ctx, tx, p)
}

// judge classifies evs (in time order) against their sends' dispatch times, giving each click the same
// source's other clicks on its send, stored or in the batch. It also returns the stored human clicks whose
// effects are still pending that a click of the batch turns into a burst.
func judge(evs []Received, tasks map[uuid.UUID]dbq.TrackingTasksRow, near []dbq.TrackingClicksNearRow, w Windows) ([]Decision, []uuid.UUID) {
	clicksOf := map[uuid.UUID][]int{} // the batch's clicks by send
	for i, e := range evs {
		if e.Token.Kind == KindClick {
			clicksOf[e.Token.TaskID] = append(clicksOf[e.Token.TaskID], i)
		}
	}
	nearOf := map[uuid.UUID][]dbq.TrackingClicksNearRow{} // the stored clicks by send
	for _, c := range near {
		nearOf[c.TaskID] = append(nearOf[c.TaskID], c)
	}
	decisions := make([]Decision, len(evs))
	var others []Click // reused: Classify keeps nothing of it
	for i, e := range evs {
		ev := Event{Kind: e.Token.Kind, At: e.At, UserAgent: e.UserAgent, Source: e.Source, LinkIndex: e.Token.LinkIndex}
		if t, ok := tasks[e.Token.TaskID]; ok && t.SentAt != nil {
			ev.SentAt = *t.SentAt
		}
		if e.Token.Kind == KindClick {
			others = others[:0]
			for _, c := range nearOf[e.Token.TaskID] {
				if sameSource(e.IPHash, e.SourceNetwork, c.IpHash, c.SourceNetwork) {
					others = append(others, Click{At: c.At, LinkIndex: int(c.LinkIndex)})
				}
			}
			for _, j := range clicksOf[e.Token.TaskID] {
				if o := evs[j]; j != i && sameSource(e.IPHash, e.SourceNetwork, o.IPHash, o.SourceNetwork) {
					others = append(others, Click{At: o.At, LinkIndex: o.Token.LinkIndex})
				}
			}
			ev.OtherClicks = others
		}
		decisions[i] = Classify(ev, w)
	}
	var rejudged []uuid.UUID
	for _, c := range near {
		if !c.Pending {
			continue
		}
		// Only the burst rule reads other clicks, so it is the only rule a later click can make apply.
		others = others[:0]
		for _, j := range clicksOf[c.TaskID] {
			if o := evs[j]; sameSource(c.IpHash, c.SourceNetwork, o.IPHash, o.SourceNetwork) {
				others = append(others, Click{At: o.At, LinkIndex: o.Token.LinkIndex})
			}
		}
		if w.burst(c.At, int(c.LinkIndex), others) {
			rejudged = append(rejudged, c.ID)
		}
	}
	return decisions, rejudged
}

// sameSource reports whether two requests came from one source for the burst rule: the same address (by its
// keyed hash) or the same network (/24, /48). Unknown addresses match nothing.
func sameSource(hashA, networkA, hashB, networkB string) bool {
	return hashA != "" && hashA == hashB || networkA != "" && networkA == networkB
}

// opens applies the batch's opens to the sends not opened by a person before: the first human open stamps
// opened_at, counts on the lead (undoing a machine open counted before) and raises campaign.email_opened and
// the contact's email_opened activity; opens by machines only count once as machine_opened.
func (b *Batcher) opens(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received, decisions []Decision,
	tasks map[uuid.UUID]dbq.TrackingTasksRow) error {
	type open struct {
		human   bool
		at      time.Time // the first human open
		machine bool
	}
	byTask := map[uuid.UUID]*open{}
	var order []uuid.UUID
	for i, e := range evs {
		t, ok := tasks[e.Token.TaskID]
		if e.Token.Kind != KindOpen || !ok || t.OpenedAt != nil {
			continue
		}
		o := byTask[t.ID]
		if o == nil {
			o = &open{}
			byTask[t.ID] = o
			order = append(order, t.ID)
		}
		switch {
		case decisions[i].Verdict == VerdictHuman && !o.human:
			o.human, o.at = true, e.At
		case decisions[i].Verdict == VerdictMachine:
			o.machine = true
		}
	}
	stamp := dbq.TrackingOpenStampParams{OrganizationID: org}
	counts := leadCounts{OrganizationID: org}
	for _, id := range order {
		o, t := byTask[id], tasks[id]
		switch {
		case o.human:
			stamp.Ids, stamp.Ats = append(stamp.Ids, id), append(stamp.Ats, o.at)
		case o.machine && !t.MachineOpened:
			counts.add(t, 0, 1, 0, 0, o.at)
		}
	}
	var data []any
	acts := activities{OrganizationID: org, ActivityType: activityOpened}
	if len(stamp.Ids) > 0 {
		stamped, err := b.queries.TrackingOpenStamp(ctx, tx, stamp)
		if err != nil {
			return err
		}
		for _, id := range stamped {
			o, t := byTask[id], tasks[id]
			if !t.CampaignID.Valid || !t.ContactID.Valid {
				continue
			}
			upgrade := int32(0)
			if t.MachineOpened {
				upgrade = -1
			}
			counts.add(t, 1, upgrade, 0, 0, o.at)
			data = append(data, payload(t, map[string]any{"opened_at": o.at.UTC()}))
			if err := acts.add(t, o.at, nil); err != nil {
				return err
			}
		}
	}
	if err := counts.apply(ctx, tx, b.queries); err != nil {
		return err
	}
	if _, err := b.opts.Outbox.EmitMany(ctx, tx, events.CampaignEmailOpened, data); err != nil {
		return err
	}
	return acts.apply(ctx, tx, b.queries)
}
