package pagoda

// Options configure Open. A nil *Options means the defaults.
type Options struct {
	// ReadOnly opens the database without write access: the file and its
	// WAL are opened read-only and never written.
	ReadOnly bool
}
