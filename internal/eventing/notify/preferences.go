package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// Category is the kind of event a notification reports; people choose what they hear about per category.
type Category string

// The categories of part 1, in the order of the preferences object.
const (
	InboundReply         Category = "inbound_reply"
	InboundOutOfOffice   Category = "inbound_out_of_office"
	HealthBounce         Category = "health_bounce"
	HealthComplaint      Category = "health_complaint"
	HealthWorkerDowntime Category = "health_worker_downtime"
	HealthDomainAuth     Category = "health_domain_auth"
	SecurityNewSignin    Category = "security_new_signin"
	BillingAlert         Category = "billing_alert"
	TeamActivity         Category = "team_activity"
	CampaignPaused       Category = "campaign_paused"
)

// Categories lists every category, so preferences always answer all of them.
var Categories = []Category{
	InboundReply, InboundOutOfOffice, HealthBounce, HealthComplaint, HealthWorkerDowntime, HealthDomainAuth,
	SecurityNewSignin, BillingAlert, TeamActivity, CampaignPaused,
}

// Valid reports whether c is one of Categories; the producer refuses anything else, so a typo in a caller
// fails loudly instead of creating notifications no preference controls.
func (c Category) Valid() bool { return slices.Contains(Categories, c) }

// Channels says where a category's notifications go.
type Channels struct {
	InApp bool `json:"in_app"`
	Email bool `json:"email"`
	Slack bool `json:"slack"`
	Push  bool `json:"push"`
}

// Choice is a user's preference for one category; a disabled category is dropped whatever its channels say.
type Choice struct {
	Enabled  bool     `json:"enabled"`
	Channels Channels `json:"channels"`
}

// The email bundling window, in minutes: its bounds and what a user who never chose gets.
const (
	MinEmailDigestMinutes     = 30
	MaxEmailDigestMinutes     = 1440
	DefaultEmailDigestMinutes = 30
)

// Preferences is a user's complete preferences: every category, defaults filled in.
type Preferences struct {
	Categories         map[Category]Choice
	EmailDigestMinutes int
}

// Default returns what a category does until the user chooses: replies and out-of-office answers are off
// (they are the noisy ones), everything else is on; in-app and push everywhere, email only for what needs
// action soon (domain authentication, billing, paused campaigns), Slack nowhere.
func Default(c Category) Choice {
	enabled := c != InboundReply && c != InboundOutOfOffice
	email := c == HealthDomainAuth || c == BillingAlert || c == CampaignPaused
	return Choice{Enabled: enabled, Channels: Channels{InApp: true, Email: email, Push: true}}
}

// merged lays the chosen categories over the defaults.
func merged(chosen map[Category]Choice, digestMinutes int) Preferences {
	p := Preferences{Categories: make(map[Category]Choice, len(Categories)),
		EmailDigestMinutes: cmp.Or(digestMinutes, DefaultEmailDigestMinutes)}
	for _, c := range Categories {
		choice, ok := chosen[c]
		if !ok {
			choice = Default(c)
		}
		p.Categories[c] = choice
	}
	return p
}

// Load reads a user's preferences merged over the defaults; a user who never saved any gets the defaults.
func Load(ctx context.Context, db dbq.DBTX, userID uuid.UUID) (Preferences, error) {
	row, err := dbq.New().NotificationPreferencesGet(ctx, db, userID)
	if errors.Is(err, pgx.ErrNoRows) {
		return merged(nil, 0), nil
	}
	if err != nil {
		return Preferences{}, fmt.Errorf("notify: load preferences: %w", err)
	}
	var chosen map[Category]Choice
	if err := json.Unmarshal(row.Categories, &chosen); err != nil {
		return Preferences{}, fmt.Errorf("notify: decode preferences: %w", err)
	}
	return merged(chosen, int(row.EmailDigestMinutes)), nil
}

// Save replaces a user's preferences with a complete choice: chosen holds the categories the user set (the
// others fall back to their defaults, and keep following them), digestMinutes the email window (0 for the
// default). Unknown categories are ignored. It returns the preferences as Load will read them.
func Save(ctx context.Context, db dbq.DBTX, userID uuid.UUID, chosen map[Category]Choice, digestMinutes int) (Preferences, error) {
	kept := make(map[Category]Choice, len(chosen))
	for c, choice := range chosen {
		if c.Valid() {
			kept[c] = choice
		}
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		return Preferences{}, err
	}
	p := merged(kept, digestMinutes)
	if err := dbq.New().NotificationPreferencesPut(ctx, db, dbq.NotificationPreferencesPutParams{
		UserID: userID, Categories: raw, EmailDigestMinutes: int32(p.EmailDigestMinutes),
	}); err != nil {
		return Preferences{}, fmt.Errorf("notify: save preferences: %w", err)
	}
	return p, nil
}
