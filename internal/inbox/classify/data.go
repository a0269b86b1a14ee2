package classify

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

//go:embed data/*.json
var dataFS embed.FS

// Languages are the languages the built-in lists cover, in the order a tie between them is broken.
var Languages = []string{"en", "de", "fr", "es"}

// list is one language's data file: the phrases of each intent and the words the text rules read. Every entry
// is lower-case; phrases are compared after fold (accents and punctuation do not matter).
type list struct {
	Stopwords        []string       `json:"stopwords"`
	Positive         []string       `json:"positive"`
	Negative         []string       `json:"negative"`
	Unsubscribe      []string       `json:"unsubscribe"`
	Question         []string       `json:"question"`
	Neutral          []string       `json:"neutral"`
	OOOSubject       []string       `json:"ooo_subject"`
	AutoReplySubject []string       `json:"auto_reply_subject"`
	OOOBody          []string       `json:"ooo_body"`
	AutomatedSubject []string       `json:"automated_subject"`
	AutomatedBody    []string       `json:"automated_body"`
	Departed         []string       `json:"departed"`
	ReturnTriggers   []string       `json:"return_triggers"`
	UntilTriggers    []string       `json:"until_triggers"`
	Months           map[string]int `json:"months"`
	Weekdays         []string       `json:"weekdays"`
	QuoteMarkers     []string       `json:"quote_markers"`
	QuoteSeparators  []string       `json:"quote_separators"`
	QuoteFrom        []string       `json:"quote_from"`
	QuoteFields      []string       `json:"quote_fields"`
	QuoteLeads       []string       `json:"quote_leads"`
	QuoteVerbs       []string       `json:"quote_verbs"`
	Signoffs         []string       `json:"signoffs"`
	Negations        []string       `json:"negations"`
	// The opt-out lists are read as the file's optout_* keys.
	optOutLists
}

// optOutLists are the words the opt-out rules read (see optout.go): each list gives its words one role.
type optOutLists struct {
	Words       []string `json:"optout_words"`
	Contact     []string `json:"optout_contact"`
	Channels    []string `json:"optout_channels"`
	Objects     []string `json:"optout_objects"`
	Stop        []string `json:"optout_stop"`
	More        []string `json:"optout_more"`
	Cancel      []string `json:"optout_cancel"`
	Mention     []string `json:"optout_mention"`
	Nouns       []string `json:"optout_nouns"`
	Determiners []string `json:"optout_determiners"`
	Desire      []string `json:"optout_desire"`
	Self        []string `json:"optout_self"`
	Invite      []string `json:"optout_invite"`
	Blockers    []string `json:"optout_blockers"`
	Redirect    []string `json:"optout_redirect"`
	Fillers     []string `json:"optout_fillers"`
	Refusals    []string `json:"optout_refusals"`
	Remove      []string `json:"optout_remove"`
	Person      []string `json:"optout_person"`
	Data        []string `json:"optout_data"`
	Owner       []string `json:"optout_owner"`
	Law         []string `json:"optout_law"`
	Causative   []string `json:"optout_causative"`
	Closing     []string `json:"optout_closing"`
	Reported    []string `json:"optout_reported"`
	Impersonal  []string `json:"optout_impersonal"`
	Then        []string `json:"optout_then"`
	Contrast    []string `json:"optout_contrast"`
	Past        []string `json:"optout_past"`
	Persist     []string `json:"optout_persist"`
	Oppose      []string `json:"optout_oppose"`
	Absent      []string `json:"optout_absent"`
	AbsentOwner []string `json:"optout_absent_owner"`
	Articles    []string `json:"optout_articles"`
	Cease       []string `json:"optout_cease"`
	Habitual    []string `json:"optout_habitual"`
	Group       []string `json:"optout_group"`
	Intended    []string `json:"optout_intended"`
}

// roles are the lists by the role they give their words.
func (o optOutLists) roles() map[role][]string {
	return map[role][]string{roleWord: o.Words, roleContact: o.Contact, roleChannel: o.Channels, roleObject: o.Objects,
		roleStop: o.Stop, roleMore: o.More, roleCancel: o.Cancel, roleMention: o.Mention, roleNoun: o.Nouns,
		roleDeterminer: o.Determiners, roleDesire: o.Desire, roleSelf: o.Self, roleInvite: o.Invite,
		roleBlocker: o.Blockers, roleRedirect: o.Redirect, roleFiller: o.Fillers, roleRefusal: o.Refusals,
		roleRemove: o.Remove, rolePerson: o.Person, roleData: o.Data, roleOwner: o.Owner, roleLaw: o.Law,
		roleCausative: o.Causative, roleClosing: o.Closing, roleReported: o.Reported,
		roleImpersonal: o.Impersonal, roleThen: o.Then, roleContrast: o.Contrast, rolePast: o.Past, rolePersist: o.Persist,
		roleOppose: o.Oppose, roleAbsent: o.Absent, roleAbsentOwner: o.AbsentOwner, roleArticle: o.Articles,
		roleCease: o.Cease, roleHabitual: o.Habitual, roleGroup: o.Group,
		roleIntended: o.Intended}
}

// lists answers the named lists of a data file, for validation.
func (l list) lists() map[string][]string {
	months := make([]string, 0, len(l.Months))
	for m := range l.Months {
		months = append(months, m)
	}
	slices.Sort(months)
	out := map[string][]string{"stopwords": l.Stopwords, "positive": l.Positive, "negative": l.Negative,
		"unsubscribe": l.Unsubscribe, "question": l.Question, "neutral": l.Neutral, "ooo_subject": l.OOOSubject, "auto_reply_subject": l.AutoReplySubject, "departed": l.Departed,
		"ooo_body": l.OOOBody, "automated_subject": l.AutomatedSubject, "automated_body": l.AutomatedBody,
		"return_triggers": l.ReturnTriggers, "until_triggers": l.UntilTriggers, "months": months,
		"weekdays": l.Weekdays, "quote_markers": l.QuoteMarkers, "quote_separators": l.QuoteSeparators,
		"quote_from": l.QuoteFrom, "quote_fields": l.QuoteFields, "quote_leads": l.QuoteLeads, "quote_verbs": l.QuoteVerbs,
		"signoffs": l.Signoffs, "negations": l.Negations}
	for rl, entries := range l.roles() {
		out["optout_"+roleName[rl]] = entries
	}
	return out
}

// validate says what is wrong with a data file: an empty list, an entry that is empty, not lower-case or
// repeated (after fold, so two spellings of one phrase are one), or a month number out of 1..12.
func (l list) validate() error {
	for name, entries := range l.lists() {
		if len(entries) == 0 {
			return fmt.Errorf("%s is empty", name)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if strings.TrimSpace(e) == "" {
				return fmt.Errorf("%s has an empty entry", name)
			}
			if e != strings.ToLower(e) || e != strings.TrimSpace(e) {
				return fmt.Errorf("%s entry %q is not lower-case and trimmed", name, e)
			}
			key := fold(e)
			if seen[key] {
				return fmt.Errorf("%s entry %q is repeated", name, e)
			}
			seen[key] = true
		}
	}
	for m, n := range l.Months {
		if n < 1 || n > 12 {
			return fmt.Errorf("months entry %q is %d, not 1..12", m, n)
		}
	}
	return nil
}

// readData reads the data file of each language.
func readData() (map[string]list, error) {
	out := map[string]list{}
	for _, lang := range Languages {
		raw, err := dataFS.ReadFile(path.Join("data", lang+".json"))
		if err != nil {
			return nil, err
		}
		var l list
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("data/%s.json: %w", lang, err)
		}
		out[lang] = l
	}
	return out, nil
}
