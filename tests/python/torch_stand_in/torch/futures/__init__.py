class Future:
    def __init__(self, devices=None):
        self.devices = devices

    def set_result(self, result):
        self.result = result
