// Package integration runs the layers Go services put over database/sql
// against the fluss driver: GORM through its MySQL dialector (with and
// without its default transaction), sqlx and bun with its MySQL dialect.
// It is a module of its own so that the driver's module does not depend
// on them; run it with `cd integration && go test ./...`.
package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/flusslite/fluss"
)

// User is GORM's usual model: gorm.Model gives an auto-increment
// BIGINT UNSIGNED id, the create and update times and the soft-delete
// time.
type User struct {
	gorm.Model
	Name   string
	Age    int64
	Active bool
	Email  string `gorm:"size:191"`
}

// openGorm opens GORM's MySQL dialector on the fluss driver over a fresh
// directory. GORM's dialector asks SELECT VERSION() and information_schema
// on its own; nothing is skipped.
func openGorm(t *testing.T, skipDefaultTx bool) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(mysql.New(mysql.Config{DriverName: "fluss", DSN: t.TempDir()}), &gorm.Config{
		SkipDefaultTransaction: skipDefaultTx,
		Logger:                 logger.Default.LogMode(logger.Silent),
	})
	require.NoError(t, err)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sqlDB.Close()) })
	return db
}

func TestGormWithoutDefaultTransaction(t *testing.T) {
	runGormSuite(t, openGorm(t, true))
}

// TestGormDefaultTransaction runs the same suite with GORM wrapping every
// write in BeginTx/Commit.
func TestGormDefaultTransaction(t *testing.T) {
	db := openGorm(t, false)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	tx, err := sqlDB.Begin()
	if errors.Is(err, fluss.ErrUnsupported) {
		t.Skip("fluss does not support transactions yet (Begin returns ErrUnsupported); GORM's default transaction needs them")
	}
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	runGormSuite(t, db)
}

func runGormSuite(t *testing.T, db *gorm.DB) {
	// AutoMigrate asks information_schema whether the table exists, then
	// creates it from GORM's MySQL DDL; a second run finds it.
	require.NoError(t, db.AutoMigrate(&User{}))
	require.True(t, db.Migrator().HasTable(&User{}))
	require.True(t, db.Migrator().HasTable("users"))
	require.False(t, db.Migrator().HasTable("nope"))
	require.NoError(t, db.AutoMigrate(&User{}), "a second AutoMigrate finds the table and its columns")

	// Create fills the id from LastInsertId.
	ann := User{Name: "ann", Age: 30, Active: true, Email: "ann@example.com"}
	require.NoError(t, db.Create(&ann).Error)
	require.Equal(t, uint(1), ann.ID)
	require.False(t, ann.CreatedAt.IsZero())

	// A batch create gets consecutive ids from the first generated one,
	// as MySQL reports them.
	batch := []User{{Name: "bob", Age: 25}, {Name: "cid", Age: 41, Active: true}, {Name: "dee", Age: 35}}
	require.NoError(t, db.Create(&batch).Error)
	require.Equal(t, []uint{2, 3, 4}, []uint{batch[0].ID, batch[1].ID, batch[2].ID})

	var got User
	require.NoError(t, db.First(&got, ann.ID).Error)
	require.Equal(t, "ann", got.Name)
	require.Equal(t, int64(30), got.Age)
	require.True(t, got.Active)
	require.Equal(t, "ann@example.com", got.Email)
	require.WithinDuration(t, ann.CreatedAt, got.CreatedAt, time.Millisecond, "DATETIME(3) keeps milliseconds")

	got = User{}
	require.NoError(t, db.First(&got, "name = ?", "cid").Error)
	require.Equal(t, uint(3), got.ID)
	err := db.First(&User{}, "name = ?", "nobody").Error
	require.ErrorIs(t, err, gorm.ErrRecordNotFound)

	var older []User
	require.NoError(t, db.Where("age > ?", 30).Order("age desc").Find(&older).Error)
	require.Equal(t, []string{"cid", "dee"}, names(older))
	require.NoError(t, db.Where("name IN ?", []string{"ann", "bob"}).Order("id").Find(&older).Error)
	require.Equal(t, []string{"ann", "bob"}, names(older))
	require.NoError(t, db.Where(&User{Active: true}).Order("id").Find(&older).Error)
	require.Equal(t, []string{"ann", "cid"}, names(older))

	// Save writes every field of a loaded row.
	got.Age = 42
	got.Email = "cid@example.com"
	require.NoError(t, db.Save(&got).Error)
	load := func(id uint) User {
		t.Helper()
		var u User
		require.NoError(t, db.First(&u, id).Error)
		return u
	}
	reread := load(got.ID)
	require.Equal(t, int64(42), reread.Age)
	require.Equal(t, "cid@example.com", reread.Email)
	require.True(t, reread.UpdatedAt.After(reread.CreatedAt) || reread.UpdatedAt.Equal(reread.CreatedAt))

	// Save of a new row with its id given: GORM's UPDATE finds nothing
	// and falls back to INSERT ... ON DUPLICATE KEY UPDATE.
	eve := User{Model: gorm.Model{ID: 100}, Name: "eve", Age: 22}
	require.NoError(t, db.Save(&eve).Error)
	reread = load(100)
	require.Equal(t, "eve", reread.Name)
	fresh := User{Name: "fay"}
	require.NoError(t, db.Create(&fresh).Error)
	require.Greater(t, fresh.ID, uint(100), "an explicit id moves the counter past it")

	// Updates with a struct (non-zero fields) and with a map.
	require.NoError(t, db.Model(&User{}).Where("id = ?", ann.ID).Updates(User{Age: 31, Name: "anne"}).Error)
	require.NoError(t, db.Model(&ann).Updates(map[string]any{"active": false, "email": "anne@example.com"}).Error)
	reread = load(ann.ID)
	require.Equal(t, "anne", reread.Name)
	require.Equal(t, int64(31), reread.Age)
	require.False(t, reread.Active)
	require.Equal(t, "anne@example.com", reread.Email)
	res := db.Model(&User{}).Where("age < ?", 30).Update("active", true)
	require.NoError(t, res.Error)
	require.Equal(t, int64(3), res.RowsAffected, "bob, eve and fay")

	var n int64
	require.NoError(t, db.Model(&User{}).Count(&n).Error)
	require.Equal(t, int64(6), n)
	require.NoError(t, db.Model(&User{}).Where("active = ?", true).Count(&n).Error)
	require.Equal(t, int64(4), n, "bob, cid, eve and fay")

	// Delete is soft: an UPDATE of deleted_at, which queries then skip.
	require.NoError(t, db.Delete(&User{}, batch[0].ID).Error)
	require.ErrorIs(t, db.First(&User{}, batch[0].ID).Error, gorm.ErrRecordNotFound)
	reread = User{}
	require.NoError(t, db.Unscoped().First(&reread, batch[0].ID).Error)
	require.True(t, reread.DeletedAt.Valid)
	require.NoError(t, db.Model(&User{}).Count(&n).Error)
	require.Equal(t, int64(5), n)

	// Unscoped delete removes the row.
	require.NoError(t, db.Unscoped().Delete(&User{}, batch[1].ID).Error)
	require.NoError(t, db.Unscoped().Model(&User{}).Count(&n).Error)
	require.Equal(t, int64(5), n)
}

func names(us []User) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Name
	}
	return out
}
