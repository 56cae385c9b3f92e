#!/bin/sh
# In the guest (scripts/plant.sh): load kwq and the plant, which takes a
# spinlock_t inside a raw_spinlock_t section while it loads.
insmod ./kwq.ko || exit 1
insmod ./kwq_plant_rt.ko || exit 1
rmmod kwq_plant_rt
rmmod kwq
