// SPDX-License-Identifier: MIT
/*
 * --runas USER: the process takes USER's uid, gid and supplementary groups, and cannot take
 * root back (checked, not assumed). tests/integration/test_sandbox.py runs a VM as nobody.
 */
#include "runas.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int runas_user(const char *user)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int r;

	r = getpwnam_r(user, &pw, buf, sizeof(buf), &found);
	if (r || !found) {
		log_error("--runas: no user '%s'%s%s", user, r ? ": " : "", r ? strerror(r) : "");
		return r ? -r : -ENOENT;
	}
	/* Groups first: after setuid() we could no longer change them. */
	if (initgroups(found->pw_name, found->pw_gid) < 0 || setgid(found->pw_gid) < 0 ||
	    setuid(found->pw_uid) < 0) {
		r = -errno;
		log_error("--runas: cannot become user '%s' (uid %u, gid %u): %s", user,
			  (unsigned)found->pw_uid, (unsigned)found->pw_gid, strerror(-r));
		return r;
	}
	if (found->pw_uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		log_error("--runas: user '%s' could become root again: refusing to run", user);
		return -EPERM;
	}
	log_info("running as user '%s' (uid %u, gid %u)", user, (unsigned)found->pw_uid,
		 (unsigned)found->pw_gid);
	return 0;
}
