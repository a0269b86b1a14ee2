package abtest

import (
	"math"
	"slices"

	"github.com/google/uuid"
)

// Confidence labels: how sure a verdict is that its leader is better than its runner-up.
const (
	ConfidenceInsufficient = "insufficient_data"
	ConfidenceLow          = "low"
	ConfidenceMedium       = "medium"
	ConfidenceHigh         = "high"
)

// The z-scores where confidence steps up (one-sided 95 and 99.5 percent), so a reader of the API can tell how
// a label was reached.
const (
	zMedium = 1.645
	zHigh   = 2.576
)

// Counts are what one variant's sends did: the input of every decision and the rows of the analysis.
type Counts struct {
	VariantID uuid.UUID
	Name      string
	// StepID is the variant's step; campaign-level variants have none and form their own group.
	StepID    uuid.NullUUID
	IsControl bool
	// IsActive says the variant is still sent; inactive variants are listed but not compared.
	IsActive bool
	// Promoted says the variant was promoted as its group's winner.
	Promoted bool
	// Sent counts the sends handed over; Opened, Clicked and Replied count among them.
	Sent, Opened, Clicked, Replied int64
	// Bounced counts Rejected plus the sent messages that bounced later.
	Bounced int64
	// Rejected counts the sends the recipient's server refused outright: bounces that are not in Sent.
	Rejected int64
}

// Rates are a variant's counts as fractions of its sends, rounded for display.
type Rates struct {
	Open, Click, Reply, Bounce float64
}

// Rates answers c's rates: opens, clicks and replies over Sent, bounces over Sent plus Rejected (the refused
// sends were attempts too), so none exceeds 1.
func (c Counts) Rates() Rates {
	return Rates{Open: Rate(c.Opened, c.Sent), Click: Rate(c.Clicked, c.Sent), Reply: Rate(c.Replied, c.Sent),
		Bounce: Rate(c.Bounced, c.Sent+c.Rejected)}
}

// Rate is n of total as a fraction rounded to four places (0.1234 = 12.34 percent): enough to tell variants
// apart in the API without float noise. It is 0 when total is 0.
func Rate(n, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return math.Round(float64(n)/float64(total)*1e4) / 1e4
}

// hits is the numerator of rule for c; false for a rule Decide does not know.
func hits(c Counts, rule string) (int64, bool) {
	switch rule {
	case "open_rate":
		return c.Opened, true
	case "click_rate":
		return c.Clicked, true
	case "reply_rate":
		return c.Replied, true
	}
	return 0, false
}

// Verdict is the outcome of one group of variants compared with each other.
type Verdict struct {
	// StepID is the group's step; not valid for the campaign-level group.
	StepID uuid.NullUUID
	// Sent is the sends of the variants compared.
	Sent int64
	// Winner is the variant whose rate is strictly the highest, nil while none leads.
	Winner *Counts
	// Leader and RunnerUp are the two best variants by rate when the group could be judged (a tie included),
	// nil otherwise; the z-test compares them.
	Leader, RunnerUp *Counts
	// Z is the two-proportion z-score of Leader against RunnerUp (0 when not judged).
	Z float64
	// Confidence is one of the Confidence labels.
	Confidence string
}

// Decision is the A/B outcome of a campaign: every group's verdict, and the one verdict the campaign reports
// (embedded; see the package invariants for how it is chosen).
type Decision struct {
	Verdict
	Groups []Verdict
}

// Decide judges variants by rule (one of campaign.WinningRules; an unknown rule judges nothing), requiring
// minSample sends of every variant compared. It groups the variants by step, judges each group and picks the
// campaign's verdict, as the package invariants state. Variants keep their order within a group, and groups
// are ordered by their first variant, so an earlier variant wins any tie of the order.
func Decide(variants []Counts, rule string, minSample int) Decision {
	var d Decision
	for _, g := range groups(variants) {
		d.Groups = append(d.Groups, judge(g, rule, int64(minSample)))
	}
	d.Verdict = Verdict{Confidence: ConfidenceInsufficient}
	pick := -1
	for i, g := range d.Groups {
		switch {
		case pick < 0:
			pick = i
		case (g.Winner != nil) != (d.Groups[pick].Winner != nil):
			if g.Winner != nil {
				pick = i
			}
		case g.Sent > d.Groups[pick].Sent:
			pick = i
		}
	}
	if pick >= 0 {
		d.Verdict = d.Groups[pick]
	}
	return d
}

// groups splits variants by step, in the order each group's first variant appears.
func groups(variants []Counts) [][]Counts {
	var out [][]Counts
	at := map[uuid.NullUUID]int{}
	for _, v := range variants {
		i, ok := at[v.StepID]
		if !ok {
			i = len(out)
			at[v.StepID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], v)
	}
	return out
}

// judge decides one group.
func judge(group []Counts, rule string, minSample int64) Verdict {
	out := Verdict{StepID: group[0].StepID, Confidence: ConfidenceInsufficient}
	var cmp []Counts
	for _, v := range group {
		if v.IsActive {
			cmp = append(cmp, v)
			out.Sent += v.Sent
		}
	}
	if _, known := hits(Counts{}, rule); !known || len(cmp) < 2 {
		return out
	}
	for _, v := range cmp {
		if v.Sent < minSample {
			return out
		}
	}
	// Best rate first; the stable sort keeps the given order among equal rates.
	slices.SortStableFunc(cmp, func(a, b Counts) int { return -compareRates(a, b, rule) })
	leader, runnerUp := cmp[0], cmp[1]
	out.Leader, out.RunnerUp = &leader, &runnerUp
	out.Z = zScore(leader, runnerUp, rule)
	if compareRates(leader, runnerUp, rule) == 0 {
		out.Confidence = ConfidenceLow
		return out
	}
	out.Winner = &leader
	out.Confidence = label(out.Z)
	return out
}

// compareRates orders a and b by their rate of rule exactly, by cross-multiplying the counts (a variant
// without sends has rate 0).
func compareRates(a, b Counts, rule string) int {
	x, _ := hits(a, rule)
	y, _ := hits(b, rule)
	switch {
	case a.Sent == 0 && b.Sent == 0:
		return 0
	case a.Sent == 0:
		return compareInt(0, y)
	case b.Sent == 0:
		return compareInt(x, 0)
	}
	return compareInt(x*b.Sent, y*a.Sent)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// zScore is the pooled two-proportion z-test of a's rate against b's: (p1 - p2) / sqrt(p (1 - p) (1/n1 +
// 1/n2)) with p the pooled rate. It is 0 when either has no sends or the pooled rate is 0 or 1 (then the
// rates are equal).
func zScore(a, b Counts, rule string) float64 {
	x1, _ := hits(a, rule)
	x2, _ := hits(b, rule)
	n1, n2 := float64(a.Sent), float64(b.Sent)
	if n1 == 0 || n2 == 0 {
		return 0
	}
	p := float64(x1+x2) / (n1 + n2)
	se := math.Sqrt(p * (1 - p) * (1/n1 + 1/n2))
	if se == 0 {
		return 0
	}
	return (float64(x1)/n1 - float64(x2)/n2) / se
}

// label turns a leader's z-score into its confidence label.
func label(z float64) string {
	switch z = math.Abs(z); {
	case z < zMedium:
		return ConfidenceLow
	case z < zHigh:
		return ConfidenceMedium
	}
	return ConfidenceHigh
}
