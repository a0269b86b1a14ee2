package contacts

import (
	"fmt"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Limits on a contact's fields; the database checks the same ones.
const (
	MaxNameLen        = 255
	MaxPhoneLen       = 64
	MaxCustomKeyLen   = 64
	MaxCustomValueLen = 2000
	MaxCustomFields   = 100
)

// ValidCustomKey reports whether name may be a custom-field key: 1 to 64 letters, digits, underscores,
// spaces and dashes (ASCII letters and digits, so keys read the same in every export and filter).
func ValidCustomKey(name string) bool {
	if name == "" || len(name) > MaxCustomKeyLen {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ' ' || c == '-') {
			return false
		}
	}
	return true
}

// CheckCustomFields validates a custom-field map as sent: every key valid, every value at most 2000
// characters, at most 100 keys. The error is a 400 naming the first offender.
func CheckCustomFields(fields map[string]string) error {
	if len(fields) > MaxCustomFields {
		return apierror.BadRequest("too_many_custom_fields", fmt.Sprintf("A contact has at most %d custom fields.", MaxCustomFields))
	}
	for k, v := range fields {
		if !ValidCustomKey(k) {
			return apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field name %q may use only letters, digits, underscore, space and dash (1 to %d characters).", truncate.Chars(k, 80), MaxCustomKeyLen))
		}
		if utf8.RuneCountInString(v) > MaxCustomValueLen {
			return apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field %q is longer than %d characters.", k, MaxCustomValueLen))
		}
	}
	return nil
}

// CheckText validates one text field against max characters.
func CheckText(field, v string, max int) error {
	if utf8.RuneCountInString(v) > max {
		return apierror.BadRequest("invalid_"+field, fmt.Sprintf("%s must be at most %d characters.", field, max))
	}
	return nil
}
