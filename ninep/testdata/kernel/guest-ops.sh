set -e
M=$QKC_9P_MNT
cd $M
echo hello > a.txt
[ "$(cat a.txt)" = hello ] || { echo "FAIL read"; exit 1; }
dd if=/dev/zero of=big bs=1024 count=3000 2>/dev/null
[ "$(stat -c %s big)" = 3072000 ] || { echo "FAIL dd size"; exit 1; }
mkdir -p d/e/f
echo x > d/e/f/g
mv d/e/f/g d/moved
[ "$(cat d/moved)" = x ] || { echo "FAIL mv"; exit 1; }
ln -s a.txt sl
[ "$(readlink sl)" = a.txt ] || { echo "FAIL readlink"; exit 1; }
[ "$(cat sl)" = hello ] || { echo "FAIL follow symlink"; exit 1; }
ln a.txt hard
[ "$(stat -c %h a.txt)" = 2 ] || { echo "FAIL link count"; exit 1; }
mkfifo ff
[ -p ff ] || { echo "FAIL fifo"; exit 1; }
chmod 600 a.txt
[ "$(stat -c %a a.txt)" = 600 ] || { echo "FAIL chmod"; exit 1; }
touch -d "2020-01-02 03:04:05" a.txt
[ "$(stat -c %Y a.txt)" = "$(date -d '2020-01-02 03:04:05' +%s)" ] || { echo "FAIL touch -d"; stat a.txt; exit 1; }
truncate -s 2 a.txt 2>/dev/null || { : > t; }
printf '#!/bin/sh\necho ran-from-9p\n' > s.sh
chmod +x s.sh
[ "$(./s.sh)" = ran-from-9p ] || { echo "FAIL exec"; exit 1; }
echo more >> a.txt
mkdir many
i=0; while [ $i -lt 300 ]; do : > many/f$i; i=$((i+1)); done
[ "$(ls many | wc -l)" = 300 ] || { echo "FAIL ls many"; exit 1; }
ls -la many > /dev/null
rm -r many
[ ! -e many ] || { echo "FAIL rm -r"; exit 1; }
ls -la $M
df $M
if command -v flock >/dev/null; then
  flock -n a.txt true && echo "flock ok" || echo "flock failed: $?"
fi
rm a.txt hard sl ff big s.sh
rm -r d
ls -la $M
echo GUEST-DONE
