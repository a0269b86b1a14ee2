package contacts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Status is a verification verdict in this service's vocabulary.
type Status string

// The verdicts. Campaigns never send to invalid addresses and send to risky ones only when allowed.
const (
	StatusValid   Status = "valid"
	StatusRisky   Status = "risky"
	StatusInvalid Status = "invalid"
	StatusUnknown Status = "unknown"
)

// Verdict is a verification result as stored on a contact.
type Verdict struct {
	Status Status
	// SubStatus details the verdict: catch_all, disposable, role, spamtrap, mailbox_full, no_mx, syntax,
	// undisclosed or empty.
	SubStatus string
}

// ServiceProvider names this service's own vocabulary in verification_provider.
const ServiceProvider = "service"

// vocabularies maps each verifier's result values (normalized: lowercase, spaces and dashes as underscores)
// to a verdict. The names are the verifiers' documented result codes.
var vocabularies = map[string]map[string]Verdict{
	ServiceProvider: {
		"valid": {StatusValid, ""}, "risky": {StatusRisky, ""}, "invalid": {StatusInvalid, ""}, "unknown": {StatusUnknown, ""},
	},
	"zerobounce": {
		"valid": {StatusValid, ""}, "invalid": {StatusInvalid, ""}, "catch_all": {StatusRisky, "catch_all"},
		"unknown": {StatusUnknown, ""}, "spamtrap": {StatusInvalid, "spamtrap"}, "abuse": {StatusRisky, ""},
		"do_not_mail": {StatusInvalid, ""},
	},
	"millionverifier": {
		"ok": {StatusValid, ""}, "catch_all": {StatusRisky, "catch_all"}, "unknown": {StatusUnknown, ""},
		"error": {StatusUnknown, ""}, "disposable": {StatusInvalid, "disposable"}, "invalid": {StatusInvalid, ""},
	},
	"cleanmylist": {
		"valid": {StatusValid, ""}, "invalid": {StatusInvalid, ""}, "catch_all": {StatusRisky, "catch_all"},
		"unknown": {StatusUnknown, ""}, "disposable": {StatusInvalid, "disposable"}, "role": {StatusRisky, "role"},
		"spamtrap": {StatusInvalid, "spamtrap"},
	},
	"neverbounce": {
		"valid": {StatusValid, ""}, "invalid": {StatusInvalid, ""}, "disposable": {StatusInvalid, "disposable"},
		"catchall": {StatusRisky, "catch_all"}, "unknown": {StatusUnknown, ""},
	},
	"bouncer": {
		"deliverable": {StatusValid, ""}, "risky": {StatusRisky, ""}, "undeliverable": {StatusInvalid, ""},
		"unknown": {StatusUnknown, ""},
	},
	"kickbox": {
		"deliverable": {StatusValid, ""}, "undeliverable": {StatusInvalid, ""}, "risky": {StatusRisky, ""},
		"unknown": {StatusUnknown, ""},
	},
	"emailable": {
		"deliverable": {StatusValid, ""}, "undeliverable": {StatusInvalid, ""}, "risky": {StatusRisky, ""},
		"unknown": {StatusUnknown, ""},
	},
	"debounce": {
		"safe_to_send": {StatusValid, ""}, "valid": {StatusValid, ""}, "invalid": {StatusInvalid, ""},
		"risky": {StatusRisky, ""}, "accept_all": {StatusRisky, "catch_all"}, "role": {StatusRisky, "role"},
		"disposable": {StatusInvalid, "disposable"}, "spamtrap": {StatusInvalid, "spamtrap"}, "unknown": {StatusUnknown, ""},
	},
	"clearout": {
		"valid": {StatusValid, ""}, "safe_to_send": {StatusValid, ""}, "invalid": {StatusInvalid, ""},
		"catch_all": {StatusRisky, "catch_all"}, "unknown": {StatusUnknown, ""}, "disposable": {StatusInvalid, "disposable"},
		"role": {StatusRisky, "role"},
	},
	"emaillistverify": {
		"ok": {StatusValid, ""}, "ok_for_all": {StatusRisky, "catch_all"}, "fail": {StatusInvalid, ""},
		"unknown": {StatusUnknown, ""}, "incorrect": {StatusInvalid, "syntax"}, "invalid_syntax": {StatusInvalid, "syntax"},
		"missing_domain": {StatusInvalid, "no_mx"}, "invalid_mx": {StatusInvalid, "no_mx"}, "dead_server": {StatusInvalid, "no_mx"},
		"disposable": {StatusInvalid, "disposable"}, "email_disabled": {StatusInvalid, ""}, "spamtrap": {StatusInvalid, "spamtrap"},
		"smtp_protocol": {StatusUnknown, ""}, "antispam_system": {StatusUnknown, ""},
	},
}

// recognition is the order a value without a provider is looked up in: this service's vocabulary first, so
// "invalid" means our invalid, then the verifiers alphabetically.
var recognition = func() []string {
	names := make([]string, 0, len(vocabularies))
	for n := range vocabularies {
		if n != ServiceProvider {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return append([]string{ServiceProvider}, names...)
}()

// Providers lists the accepted verification_provider names.
func Providers() []string { return slices.Clone(recognition) }

// KnownProvider reports whether name (any case) is an accepted verification_provider.
func KnownProvider(name string) bool {
	_, ok := vocabularies[strings.ToLower(strings.TrimSpace(name))]
	return ok
}

func vocabKey(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(v)
}

// Recognize reads value in provider's vocabulary (provider empty = whichever vocabulary knows the value).
// It returns the verdict and the provider as named (lowercased; empty when none was named, since several
// vocabularies share words like "valid" and guessing which verifier wrote one would invent a fact); ok is
// false when no vocabulary (or not the named one) knows the value. The provider must be known.
func Recognize(provider, value string) (v Verdict, matched string, ok bool) {
	key := vocabKey(value)
	if key == "" {
		return Verdict{}, "", false
	}
	if p := strings.ToLower(strings.TrimSpace(provider)); p != "" {
		v, ok = vocabularies[p][key]
		return v, p, ok
	}
	for _, p := range recognition {
		if v, ok := vocabularies[p][key]; ok {
			return v, "", true
		}
	}
	return Verdict{}, "", false
}

// ParseImportedVerdict is Recognize with the API's errors: an unknown provider is 400
// unknown_verification_provider, an unrecognised value 400 unknown_verification_status.
func ParseImportedVerdict(provider, value string) (Verdict, string, error) {
	if provider != "" && !KnownProvider(provider) {
		return Verdict{}, "", apierror.BadRequest("unknown_verification_provider",
			fmt.Sprintf("verification_provider %q is not one of %s.", truncate.Chars(provider, 64), strings.Join(recognition, ", ")))
	}
	v, p, ok := Recognize(provider, value)
	if !ok {
		return Verdict{}, "", apierror.BadRequest("unknown_verification_status",
			fmt.Sprintf("verification_status %q is not a verdict this service or the named verifier uses.", truncate.Chars(value, 64)))
	}
	return v, p, nil
}

// LooksLikeVerifierColumn reports whether a file column of values reads as another verifier's output: most
// non-empty sample values are verdicts in some vocabulary, and not all of them are this service's plain words
// (which a notes column could also contain by chance).
func LooksLikeVerifierColumn(header string, samples []string) bool {
	h := vocabKey(header)
	named := strings.Contains(h, "verif") || strings.Contains(h, "status") || strings.Contains(h, "result") ||
		strings.Contains(h, "zb_") || strings.Contains(h, "deliverab")
	seen, known := 0, 0
	for _, s := range samples {
		if strings.TrimSpace(s) == "" {
			continue
		}
		seen++
		if _, _, ok := Recognize("", s); ok {
			known++
		}
	}
	if seen == 0 {
		return false
	}
	return known*10 >= seen*8 && (named || known == seen)
}
