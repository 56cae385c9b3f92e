#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# In the guest: load kwq and run only the Go section (go.sh, which ends
# with client-go's); scripts/go.sh vm boots it.
. ./lib.sh
tap_begin "module-$(uname -r)"
insmod ./kwq.ko; tap $? "insmod kwq.ko"
tap_end
. ./go.sh
tap_begin "unload-$(uname -r)"
rmmod kwq; tap $? "rmmod kwq"
tap_end
