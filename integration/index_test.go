package integration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// Member has GORM's index tags: a unique e-mail and a plain index on
// the name.
type Member struct {
	ID    uint   `gorm:"primaryKey"`
	Email string `gorm:"size:191;uniqueIndex"`
	Name  string `gorm:"size:64;index"`
	Team  string `gorm:"size:16"`
}

// MemberV2 is Member's table with an index GORM adds to it on the next
// AutoMigrate (by CREATE INDEX).
type MemberV2 struct {
	ID    uint   `gorm:"primaryKey"`
	Email string `gorm:"size:191;uniqueIndex"`
	Name  string `gorm:"size:64;index"`
	Team  string `gorm:"size:16;index:idx_team"`
}

func (MemberV2) TableName() string { return "members" }

func TestGormIndexes(t *testing.T) {
	for _, skipTx := range []bool{true, false} {
		db := openGorm(t, skipTx)
		require.NoError(t, db.AutoMigrate(&Member{}))
		require.NoError(t, db.AutoMigrate(&Member{}), "a second AutoMigrate finds the indexes")
		require.True(t, db.Migrator().HasIndex(&Member{}, "idx_members_email"))
		require.True(t, db.Migrator().HasIndex(&Member{}, "idx_members_name"))

		require.NoError(t, db.Create(&Member{ID: 1, Email: "ann@x", Name: "ann"}).Error)
		require.NoError(t, db.Create(&Member{ID: 2, Email: "bob@x", Name: "ann"}).Error)
		err := db.Create(&Member{ID: 3, Email: "ann@x", Name: "eve"}).Error
		require.ErrorIs(t, err, fluss.ErrConstraint)
		require.ErrorContains(t, err, "Duplicate entry 'ann@x' for key 'idx_members_email'")
		err = db.Model(&Member{ID: 2}).Update("email", "ann@x").Error
		require.ErrorIs(t, err, fluss.ErrConstraint)

		var found []Member
		require.NoError(t, db.Where("name = ?", "ann").Order("id").Find(&found).Error)
		require.Len(t, found, 2)
		var one Member
		require.NoError(t, db.Where("email = ?", "bob@x").First(&one).Error)
		require.Equal(t, uint(2), one.ID)

		// The index tag added later: AutoMigrate creates it on the rows.
		require.NoError(t, db.Model(&Member{ID: 1}).Update("team", "red").Error)
		require.False(t, db.Migrator().HasIndex(&MemberV2{}, "idx_team"))
		require.NoError(t, db.AutoMigrate(&MemberV2{}))
		require.True(t, db.Migrator().HasIndex(&MemberV2{}, "idx_team"))
		var red []MemberV2
		require.NoError(t, db.Where("team = ?", "red").Find(&red).Error)
		require.Len(t, red, 1)
		require.NoError(t, db.Migrator().DropIndex(&MemberV2{}, "idx_team"))
		require.False(t, db.Migrator().HasIndex(&MemberV2{}, "idx_team"))
	}
}
