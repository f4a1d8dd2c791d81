// SPDX-License-Identifier: MIT
/*
 * --runas USER: the process takes USER's uid, gid and supplementary groups, and cannot take
 * root back (checked, not assumed). The user is looked up once (runas_prepare()), so that a
 * jail without /etc can still drop to it. tests/integration/test_sandbox.py and
 * test_jail.py run a VM as nobody.
 */
#include "runas.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* The user runas_prepare() found: what runas_user() becomes. */
static struct {
	char *name;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int nr_groups;
} prepared;

int runas_prepare(const char *user)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int r, n = 16;
	gid_t *groups = NULL;

	r = getpwnam_r(user, &pw, buf, sizeof(buf), &found);
	if (r || !found) {
		log_error("--runas: no user '%s'%s%s", user, r ? ": " : "", r ? strerror(r) : "");
		return r ? -r : -ENOENT;
	}
	/* getgrouplist() says how many it needs when the array is too small. */
	for (;;) {
		int want = n;
		gid_t *g = realloc(groups, (size_t)n * sizeof(*g));

		if (!g) {
			free(groups);
			log_error("--runas: out of memory");
			return -ENOMEM;
		}
		groups = g;
		if (getgrouplist(found->pw_name, found->pw_gid, groups, &n) >= 0)
			break;
		if (n <= want)
			n = want * 2;
		if (n > 65536) {
			free(groups);
			log_error("--runas: user '%s' is in too many groups", user);
			return -E2BIG;
		}
	}
	free(prepared.name);
	free(prepared.groups);
	prepared.name = strdup(user);
	prepared.uid = found->pw_uid;
	prepared.gid = found->pw_gid;
	prepared.groups = groups;
	prepared.nr_groups = n;
	if (!prepared.name) {
		log_error("--runas: out of memory");
		return -ENOMEM;
	}
	return 0;
}

uid_t runas_uid(void)
{
	return prepared.uid;
}

int runas_user(const char *user)
{
	int r;

	if ((!prepared.name || strcmp(prepared.name, user)) && (r = runas_prepare(user)))
		return r;
	/* Groups first: after setuid() we could no longer change them. */
	if (setgroups((size_t)prepared.nr_groups, prepared.groups) < 0 ||
	    setgid(prepared.gid) < 0 || setuid(prepared.uid) < 0) {
		r = -errno;
		log_error("--runas: cannot become user '%s' (uid %u, gid %u): %s", user,
			  (unsigned)prepared.uid, (unsigned)prepared.gid, strerror(-r));
		return r;
	}
	if (prepared.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		log_error("--runas: user '%s' could become root again: refusing to run", user);
		return -EPERM;
	}
	log_info("running as user '%s' (uid %u, gid %u)", user, (unsigned)prepared.uid,
		 (unsigned)prepared.gid);
	return 0;
}
