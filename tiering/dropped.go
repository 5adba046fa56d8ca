package tiering

import (
	"context"
	"errors"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// RemoveDroppedLakes removes the lake of every table the engine knows as
// dropped: one a DROP left (the driver calls this after DROP TABLE and
// DROP DATABASE), or a crash between the engine's drop and the lake's.
// Lake directories of ids the engine never allocated stay. A round of
// such a table still running is waited for, so nothing it writes is left.
func (s *Service) RemoveDroppedLakes(ctx context.Context) error {
	ids, err := s.lk.TableIDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.eng.DroppedTable(id) {
			continue
		}
		unlock := s.lockTable(id)
		err := s.lk.DropTable(id)
		unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.opts.Logger.Info("removed the lake of a dropped table", "table_id", id)
	}
	return errors.Join(errs...)
}

// droppedDuringRound turns the error of a round whose table was dropped
// under it into one that says so, after removing what the round (and
// earlier ones) left in the lake; the caller holds the table's lock. Other
// errors are returned as they are.
func (s *Service) droppedDuringRound(info *metadata.TableInfo, err error) error {
	if err == nil || !s.eng.DroppedTable(info.TableID) {
		return err
	}
	if derr := s.lk.DropTable(info.TableID); derr != nil {
		return fmt.Errorf("table %s was dropped during the round (%v), and removing its lake files failed: %w (%w)", info.Path, err, derr, metadata.ErrNotFound)
	}
	return fmt.Errorf("table %s was dropped during the round (%v); its lake files are removed: %w", info.Path, err, metadata.ErrNotFound)
}
