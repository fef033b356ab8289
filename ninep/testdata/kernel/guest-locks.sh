set -e
mkdir -p /mnt/b
mount -t 9p -o trans=tcp,port=5640,version=9p2000.L,aname=@other,cache=none,access=user 10.0.2.2 /mnt/b
echo data > $QKC_9P_MNT/lf
/qkc/files/locktool $QKC_9P_MNT/lf /mnt/b/lf
