#!/bin/sh
# In the guest (scripts/plant.sh): load kwq and the one plant module in
# this directory, which does its wrong thing while it loads.
insmod ./kwq.ko || exit 1
for p in ./kwq_plant_*.ko; do
	insmod "$p" || exit 1
	p=${p##*/}
	rmmod "${p%.ko}"
done
rmmod kwq
