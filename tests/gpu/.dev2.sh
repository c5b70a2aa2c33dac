export LD_LIBRARY_PATH="$PWD/.gpu/lib" CMOCKA_MESSAGE_OUTPUT=TAP
.gpu/bin/test_gpu > $OUT/gpu-test.txt 2>&1; echo "gpu-test rc=$?"; grep -E "^(not ok)|auto chose" $OUT/gpu-test.txt | head -20
echo "bitwise: $(grep -c 'bitwise equal' $OUT/gpu-test.txt)"
.gpu/bin/roomsim bench --steps 20 2>&1 | tail -n +3
for b in 64x4 32x4; do .gpu/bin/roomsim bench --steps 20 --block $b --kernel slice-vec 2>&1 | tail -n 1 | sed "s/^/$b /"; done
.gpu/bin/roomsim bench --steps 20 --precision float64 --kernel slice-vec 2>&1 | tail -n 1
