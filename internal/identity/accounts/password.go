package accounts

import (
	"strings"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// MinPasswordLen is the shortest password accepted anywhere.
const MinPasswordLen = 10

// maxPasswordLen bounds hashing work for a single request.
const maxPasswordLen = 256

// commonPasswords are refused outright: they fall to the first guesses of any attack.
var commonPasswords = map[string]bool{
	"password123": true, "password1234": true, "1234567890": true, "qwertyuiop": true, "iloveyou123": true,
	"letmein1234": true, "welcome123": true, "admin12345": true, "passw0rd123": true, "abc1234567": true,
	"0123456789": true, "1q2w3e4r5t": true, "qwerty12345": true, "football123": true, "monkey12345": true,
}

// CheckPassword refuses weak passwords with a message that says what to change (400 weak_password).
func CheckPassword(password, email string) error {
	n := utf8.RuneCountInString(password)
	weak := func(msg string) error { return apierror.BadRequest("weak_password", msg) }
	switch {
	case n < MinPasswordLen:
		return weak("Use at least 10 characters; a short phrase of unrelated words works well.")
	case n > maxPasswordLen:
		return weak("Use at most 256 characters.")
	case commonPasswords[strings.ToLower(password)]:
		return weak("That password is one of the most common ones; choose another.")
	case distinctRunes(password) < 4:
		return weak("Use more varied characters.")
	}
	if local, _, ok := strings.Cut(strings.ToLower(email), "@"); ok && len(local) >= 4 && strings.Contains(strings.ToLower(password), local) {
		return weak("Do not build the password from your email address.")
	}
	return nil
}

func distinctRunes(s string) int {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	return len(seen)
}
