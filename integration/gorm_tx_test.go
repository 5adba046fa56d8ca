package integration

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/flusslite/fluss"
)

// TestGormNestedTransaction: GORM's nested Transaction runs through
// SAVEPOINT and ROLLBACK TO SAVEPOINT, with and without GORM's default
// transaction and prepared statements: an inner failure rolls back the
// inner writes only; an error the outer function returns commits
// nothing, also when the inner one failed first (the SAVEPOINT used to be
// a syntax error here).
func TestGormNestedTransaction(t *testing.T) {
	for _, cfg := range []struct {
		name                string
		skipDefault, prepSt bool
	}{{"default-tx", false, false}, {"skip-default-tx", true, false}, {"prepare-stmt", false, true}} {
		t.Run(cfg.name, func(t *testing.T) {
			db := openGorm(t, cfg.skipDefault)
			if cfg.prepSt {
				db = db.Session(&gorm.Session{PrepareStmt: true})
			}
			require.NoError(t, db.AutoMigrate(&User{}))
			namesIn := func() []string {
				t.Helper()
				var us []User
				require.NoError(t, db.Order("id").Find(&us).Error)
				return names(us)
			}
			errInner := errors.New("inner fails")

			// Both levels succeed: both rows.
			require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&User{Name: "a"}).Error; err != nil {
					return err
				}
				return tx.Transaction(func(tx2 *gorm.DB) error {
					return tx2.Create(&User{Name: "b"}).Error
				})
			}))
			require.Equal(t, []string{"a", "b"}, namesIn())

			// The inner one fails and the outer carries on: GORM rolls
			// back to the savepoint, the outer row stays.
			require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&User{Name: "c"}).Error; err != nil {
					return err
				}
				err := tx.Transaction(func(tx2 *gorm.DB) error {
					if err := tx2.Create(&User{Name: "inner"}).Error; err != nil {
						return err
					}
					return errInner
				})
				require.ErrorIs(t, err, errInner)
				return tx.Create(&User{Name: "d"}).Error
			}))
			require.Equal(t, []string{"a", "b", "c", "d"}, namesIn())

			// The outer one returns the inner error: nothing commits.
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&User{Name: "e"}).Error; err != nil {
					return err
				}
				return tx.Transaction(func(tx2 *gorm.DB) error {
					if err := tx2.Create(&User{Name: "f"}).Error; err != nil {
						return err
					}
					return errInner
				})
			})
			require.ErrorIs(t, err, errInner)
			require.Equal(t, []string{"a", "b", "c", "d"}, namesIn())

			// A statement fails and the function drops its error: GORM
			// still calls Commit; the driver commits nothing, and the
			// Transaction's error says so.
			err = db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&User{Name: "x"}).Error; err != nil {
					return err
				}
				_ = tx.Exec("SELEC 1").Error
				return nil
			})
			require.ErrorContains(t, err, "nothing was committed")
			require.Equal(t, []string{"a", "b", "c", "d"}, namesIn())

			// SavePoint and RollbackTo called directly.
			tx := db.Begin()
			require.NoError(t, tx.Error)
			require.NoError(t, tx.Create(&User{Name: "g"}).Error)
			require.NoError(t, tx.SavePoint("sp1").Error)
			require.NoError(t, tx.Create(&User{Name: "h"}).Error)
			require.NoError(t, tx.RollbackTo("sp1").Error)
			require.NoError(t, tx.Commit().Error)
			require.Equal(t, []string{"a", "b", "c", "d", "g"}, namesIn())
		})
	}
}

// TestGormLockingConflict: GORM's clause.Locking reads FOR UPDATE and FOR
// SHARE; a row so read that another commit changes makes the
// transaction's Commit fail with ErrConflict, and a retry succeeds.
func TestGormLockingConflict(t *testing.T) {
	db := openGorm(t, true)
	require.NoError(t, db.AutoMigrate(&User{}))
	require.NoError(t, db.Create(&User{Name: "ann", Age: 30}).Error)
	attempts := 0
	err := db.Transaction(func(tx *gorm.DB) error {
		attempts++
		var u User
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&u, "name = ?", "ann").Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&User{}).Clauses(clause.Locking{Strength: "SHARE"}).Count(&n).Error; err != nil {
			return err
		}
		require.EqualValues(t, 1, n)
		// Another connection changes the row read FOR UPDATE.
		require.NoError(t, db.Model(&User{}).Where("id = ?", u.ID).Update("age", 31).Error)
		return tx.Create(&User{Name: "bob"}).Error
	})
	require.ErrorIs(t, err, fluss.ErrConflict)
	require.Equal(t, 1, attempts)
	var us []User
	require.NoError(t, db.Order("id").Find(&us).Error)
	require.Equal(t, []string{"ann"}, names(us), "nothing of the losing transaction")
}
