//go:build !unix

package hostconfig

// Identity is a user as a permission check sees them; where files have no
// Unix owner only the read-only mark counts.
type Identity struct {
	UID  int
	GIDs []int
}

// writable refuses a file marked read-only.
func (p *Planner) writable(c *Change) error {
	if c.info != nil && c.info.Mode().Perm()&0o222 == 0 {
		return ErrReadOnly
	}
	return nil
}
