package truncate

// Chars cuts s to at most n characters, for quoting user input in error messages and notes and for storing
// remote diagnostics in bounded columns.
func Chars(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
